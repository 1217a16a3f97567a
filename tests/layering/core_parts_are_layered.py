#!/usr/bin/env python3
"""Each part of the core sees the parts below it and no other.

  core_parts_are_layered.py CXX SOURCE_DIR PART=DIR:DIR... ...

Each PART (core/json, ...) comes with its target's include directories, so a
probe is compiled as that part's sources are. What a part may see is what
docs/design.md's table of layers says it links, followed through (the check
design_matches_build.py holds CMakeLists.txt to the same table). For each
part:
  - each of its own public headers compiles alone: a header includes what it
    uses, from parts its own part links;
  - a public header of each part it may see compiles;
  - every public header of each core part it may not see (core/json including
    core/pod, core/pod including core/spec) fails to compile, for want of the
    header and not for any other error.
Prints PASS or FAIL per probe and "N passed, M failed"; exits 1 on a failure.
"""
import glob
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from layers import Tally, closure, design_layers  # noqa: E402


def main():
    cxx, root = sys.argv[1], sys.argv[2]
    paths = {}
    for arg in sys.argv[3:]:
        part, _, dirs = arg.partition("=")
        paths[part] = [d for d in dirs.split(":") if d]
    design = design_layers(os.path.join(root, "docs", "design.md"))
    core_parts = sorted(p for p in design if p.startswith("core/"))
    headers = {
        p: sorted(os.path.relpath(h, os.path.join(root, "include")) for h in glob.glob(
            os.path.join(root, "include", "ray_webhook", p, "*.h"))) for p in core_parts
    }
    tally = Tally()
    report = tally.report

    with tempfile.TemporaryDirectory() as tmp:
        probe = os.path.join(tmp, "probe.cpp")

        def compile_include(part, header):
            with open(probe, "w", encoding="utf-8") as f:
                f.write(f'#include "{header}"\n')
            flags = ["-std=c++20", "-fsyntax-only"] + ["-I" + d for d in paths[part]]
            run = subprocess.run([cxx, *flags, probe], capture_output=True, text=True)
            return run.returncode == 0, run.stderr

        missing = set(core_parts) - set(paths)
        for part in sorted(missing):
            report(False, f"{part}: no include directories given (tests/CMakeLists.txt)")
        for part in sorted(set(paths) - set(core_parts)):
            report(False, f"{part}: not a core part in docs/design.md's table")
        for part in [p for p in core_parts if p in paths]:
            allowed = closure(design, part)
            if not headers[part]:
                report(False, f"{part}: no public headers under include/ray_webhook/{part}/")
            for header in headers[part]:
                ok, err = compile_include(part, header)
                report(ok, f"{part} compiles its own {header}" + ("" if ok else ": " + first_lines(err)))
            for other in core_parts:
                if other == part or not headers[other]:
                    continue
                if other in allowed:
                    header = headers[other][0]
                    ok, err = compile_include(part, header)
                    report(ok, f"{part} sees {header}" + ("" if ok else ": " + first_lines(err)))
                    continue
                for header in headers[other]:
                    ok, err = compile_include(part, header)
                    refused = not ok and f"{header}: No such file or directory" in err
                    report(refused, f"{part} cannot include {header}" +
                           ("" if refused else f" (compiler said: {first_lines(err) or 'nothing, it compiled'})"))
    return tally.exit_status()


def first_lines(text, n=3):
    return " | ".join(text.strip().splitlines()[:n])


if __name__ == "__main__":
    sys.exit(main())
