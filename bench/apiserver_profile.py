#!/usr/bin/env python3
"""Where kube-apiserver's CPU goes per created Pod, from one CPU profile.

    go tool pprof -traces PROFILE | bench/apiserver_profile.py [--tsv] CREATED

Reads the stacks that `go tool pprof -traces` prints for a profile taken while
CREATED Pods were created, and prints one line: the API server's CPU per Pod
in ms, then the share of it in each part of the webhook client and the rest
(with --tsv: those figures alone, tab-separated, after a header line).
A sample belongs to the first part in PARTS whose frames it has; the names
are k8s.io/apiserver's (pkg/admission/plugin/webhook mutating/dispatcher.go and validating/dispatcher.go call the webhook through
client-go's rest.Request and apply the patch with evanphx/json-patch) and Go's
net/http (the webhook connection's read and write loops are goroutines of
their own, outside the dispatcher's stack).
"""
import re
import sys

# (part, patterns): a sample belongs to the first part all of whose patterns
# name one of its frames.
WEBHOOK = r"^k8s\.io/apiserver/pkg/admission/plugin/webhook/(mutating|validating|generic)\."
PARTS = [
    ("patch", [r"evanphx/json-patch.*\.(Apply|ApplyIndent|DecodePatch)$"]),
    ("encode", [r"^k8s\.io/client-go/rest\.\(\*Request\)\.Body$"]),
    ("http", [r"^net/http\.\(\*Client\)\.do$"]),
    ("decode", [r"^k8s\.io/client-go/rest\.(\(\*Request\)\.transformResponse|Result\.Into)$"]),
    ("patched", [r"^k8s\.io/apiserver/pkg/admission/plugin/webhook/mutating\.\(\*mutatingDispatcher\)\.callAttrMutatingHook$",
                 r"^k8s\.io/apimachinery/pkg/runtime/serializer/json\.\(\*Serializer\)\.Decode$"]),
    ("compare", [r"\.IsOutputChangedSinceLastWebhookInvocation$"]),
    ("dispatch", [WEBHOOK]),
    ("conn", [r"^net/http\.\(\*persistConn\)\.(readLoop|writeLoop)$"]),
    ("plugins", [r"^k8s\.io/kubernetes/plugin/pkg/admission/"]),
    ("gc", [r"^runtime\.gcBgMarkWorker$"]),
]
PARTS = [(part, [re.compile(p) for p in patterns]) for part, patterns in PARTS]
LABELS = {
    "encode": "encoding the review",
    "http": "HTTP request and answer",
    "conn": "webhook connection read/write loops",
    "decode": "decoding the answer",
    "patch": "applying the patch",
    "patched": "decoding the patched Pod",
    "compare": "comparing for reinvocation",
    "dispatch": "the rest of the webhook call",
    "plugins": "in-tree admission plugins",
    "gc": "garbage collection",
    "other": "everything else",
}
WEBHOOK_PARTS = ("encode", "http", "conn", "decode", "patch", "patched", "compare", "dispatch")


def duration_ms(text):
    m = re.fullmatch(r"([0-9.]+)(ns|us|µs|ms|s|min|h)", text)
    if not m:
        raise ValueError(f"not a duration: {text}")
    scale = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1, "s": 1e3, "min": 6e4, "h": 3.6e6}[m.group(2)]
    return float(m.group(1)) * scale


def frame(text):
    """A frame's function name, without pprof's " (inline)" mark."""
    return text.strip().removesuffix(" (inline)")


def main():
    args = sys.argv[1:]
    tsv = args[:1] == ["--tsv"]
    if tsv:
        args = args[1:]
    if len(args) != 1 or not args[0].isdigit() or int(args[0]) == 0:
        sys.exit("usage: go tool pprof -traces PROFILE | apiserver_profile.py [--tsv] CREATED")
    created = int(args[0])
    totals = {}
    stack, value = [], None

    def close():
        if value is None:
            return
        part = next((name for name, patterns in PARTS
                     if all(any(p.search(frame) for frame in stack) for p in patterns)), "other")
        totals[part] = totals.get(part, 0.0) + value

    for line in sys.stdin:
        if line.startswith("-----------+"):
            close()
            stack, value = [], None
            continue
        m = re.match(r"^\s+([0-9.]+(?:ns|us|µs|ms|s|min|h))\s+(\S.*)$", line)
        if m and value is None:
            value = duration_ms(m.group(1))
            stack.append(frame(m.group(2)))
        elif value is not None and line.startswith("      ") and not line.strip().startswith(("bytes:", "label:")):
            stack.append(frame(line))
    close()
    whole = sum(totals.values())
    if whole == 0:
        sys.exit("apiserver_profile.py: no samples")
    webhook = sum(totals.get(p, 0.0) for p in WEBHOOK_PARTS)
    if tsv:
        print("\t".join(["kube-apiserver", "webhook client"] + list(LABELS.values())))
        print("\t".join(f"{v / created:.3f}" for v in [whole, webhook] + [totals.get(p, 0.0) for p in LABELS]))
        return
    parts = ", ".join(f"{label} {totals.get(p, 0.0) / created:.3f}" for p, label in LABELS.items())
    print(f"kube-apiserver CPU per Pod {whole / created:.3f} ms, of it the webhook client "
          f"{webhook / created:.3f} ms: {parts}")


if __name__ == "__main__":
    main()
