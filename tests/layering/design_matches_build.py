#!/usr/bin/env python3
"""docs/design.md's table of layers says what CMakeLists.txt builds.

  design_matches_build.py SOURCE_DIR

Passes when the table lists exactly the layers CMakeLists.txt declares
(ray_webhook_layer), each with exactly the layers it links (its DEPENDS that
are layers), and when those links have no cycle. Prints PASS or FAIL per
layer and "N passed, M failed"; exits 1 on a failure.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layers import Tally, closure, declared_layers, design_layers  # noqa: E402


def main():
    root = sys.argv[1]
    built = declared_layers(os.path.join(root, "CMakeLists.txt"))
    described = design_layers(os.path.join(root, "docs", "design.md"))
    tally = Tally()
    report = tally.report

    if not built:
        report(False, "CMakeLists.txt declares no layer (ray_webhook_layer)")
    for layer in sorted(set(built) | set(described)):
        if layer not in described:
            report(False, f"{layer}: built, but not in docs/design.md's table")
        elif layer not in built:
            report(False, f"{layer}: in docs/design.md's table, but CMakeLists.txt declares no such layer")
        elif built[layer] != described[layer]:
            only_built = ", ".join(sorted(built[layer] - described[layer])) or "nothing"
            only_doc = ", ".join(sorted(described[layer] - built[layer])) or "nothing"
            report(False, f"{layer}: links {only_built} only in CMakeLists.txt and {only_doc} only in docs/design.md")
        else:
            report(True, f"{layer} links {', '.join(sorted(built[layer])) or 'no layer'} in both")
    for layer in sorted(built):
        cyclic = [d for d in built[layer] if layer in closure(built, d)]
        if cyclic:
            report(False, f"{layer}: a cycle through {', '.join(sorted(cyclic))}")
    return tally.exit_status()


if __name__ == "__main__":
    sys.exit(main())
