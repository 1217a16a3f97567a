"""The layers as the build declares them and as docs/design.md describes them.

Both are read into one shape, {layer: set of the layers it links directly},
so that the checks under tests/layering/ compare like with like:
  - declared_layers(CMakeLists.txt): every `ray_webhook_layer(NAME ...)` call,
    its DEPENDS that are themselves layers (ray_webhook_core_json is the layer
    core/json); libraries that are not layers (simdjson, OpenSSL, the HTTP
    framing library) are not compared;
  - design_layers(docs/design.md): the table under "## Layers", one row per
    layer, whose first cell is the layer in backticks and whose last cell
    names the layers it links in backticks (anything not in backticks there
    is a third-party library, not compared).
"""
import re

LAYER_CALL = re.compile(r"^ray_webhook_layer\(([\w/]+)(.*?)\)", re.S | re.M)


def target_of(layer):
    return "ray_webhook_" + layer.replace("/", "_")


def declared_layers(cmake_path):
    with open(cmake_path, encoding="utf-8") as f:
        text = re.sub(r"#[^\n]*", "", f.read())
    calls = [(m.group(1), m.group(2)) for m in LAYER_CALL.finditer(text)]
    by_target = {target_of(name): name for name, _ in calls}
    layers = {}
    for name, body in calls:
        words = body.split()
        deps = set()
        if "DEPENDS" in words:
            for word in words[words.index("DEPENDS") + 1:]:
                if word == "SOURCES":
                    break
                if word in by_target:
                    deps.add(by_target[word])
        layers[name] = deps
    return layers


def design_layers(design_path):
    with open(design_path, encoding="utf-8") as f:
        text = f.read()
    start = text.index("\n## Layers")
    end = text.find("\n## ", start + 1)
    section = text[start:end if end >= 0 else len(text)]
    layers = {}
    for line in section.splitlines():
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        name = re.fullmatch(r"`([\w/]+)`", cells[0])
        if not name:
            continue  # the header row and its rule
        layers[name.group(1)] = set(re.findall(r"`([\w/]+)`", cells[-1]))
    return layers


def closure(layers, layer):
    """The layer and every layer it reaches through the links."""
    seen, todo = set(), [layer]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        todo.extend(layers.get(current, ()))
    return seen


class Tally:
    """PASS and FAIL lines, counted; exit_status() is 0 when something passed and nothing failed."""

    def __init__(self):
        self.passed = self.failed = 0

    def report(self, ok, what):
        print(("PASS " if ok else "FAIL ") + what)
        if ok:
            self.passed += 1
        else:
            self.failed += 1

    def exit_status(self):
        print(f"{self.passed} passed, {self.failed} failed")
        return 0 if self.failed == 0 and self.passed > 0 else 1
