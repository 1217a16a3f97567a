#!/usr/bin/env bash
# Checks every source under src/ with clang's -Wthread-safety analysis, a
# warning being an error: a member declared GUARDED_BY a Mutex
# (include/ray_webhook/mutex.h) read or written without it, a lock not given
# back, a function that REQUIRES a lock called without it. A syntax-only pass
# (nothing is compiled), with each file's flags from BUILD_DIR's
# compile_commands.json, so that it also covers files added later.
#   scripts/check-thread-safety.sh [BUILD_DIR]   (default build/, configured by scripts/build.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
command -v clang++ >/dev/null || { echo "check-thread-safety: clang++ not found (Debian package clang)" >&2; exit 1; }
[ -f "$build/compile_commands.json" ] || { echo "check-thread-safety: no $build/compile_commands.json; configure $build first" >&2; exit 1; }
commands="$(mktemp)"
trap 'rm -f "$commands"' EXIT
# One line per file: the clang++ command that checks it, or MISSING <file>.
# GCC's profile flags are dropped; the project's other warnings stay warnings.
python3 - "$build/compile_commands.json" "$(pwd)" >"$commands" <<'PY'
import json, os, shlex, sys
db, root = sys.argv[1], sys.argv[2]
entries = {}
for e in json.load(open(db)):
    entries.setdefault(os.path.realpath(os.path.join(e["directory"], e["file"])), e)
files = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, names in os.walk(os.path.join(root, "src"))
               for f in names if f.endswith(".cpp"))
for f in files:
    e = entries.get(os.path.realpath(os.path.join(root, f)))
    if e is None:
        print("MISSING " + f)
        continue
    args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
    out, skip = ["clang++"], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-c") or a.startswith("-fprofile") or a == "-Wno-missing-profile":
            skip = a == "-o"
            continue
        out.append(a)
    out += ["-fsyntax-only", "-Wthread-safety", "-Werror=thread-safety"]
    print("cd " + shlex.quote(e["directory"]) + " && " + " ".join(shlex.quote(a) for a in out))
PY
if grep -q '^MISSING ' "$commands"; then
  sed -n 's/^MISSING /check-thread-safety: not in the build, so not checked: /p' "$commands" >&2
  exit 1
fi
n=$(wc -l <"$commands")
# shellcheck disable=SC2016 # expanded by the inner shell
if ! nice -n 10 xargs -d '\n' -P "${JOBS:-2}" -n 1 bash -c 'out="$(eval "$1" 2>&1)" || { printf "%s\n" "$out" | head -40; exit 1; }' _ <"$commands"; then
  echo "check-thread-safety: a lock rule is broken (above)" >&2
  exit 1
fi
echo "check-thread-safety: $n files pass clang's -Wthread-safety"
