#!/usr/bin/env bash
# Instruction profile of the review path with valgrind's callgrind, which counts
# instructions instead of timing, so it gives the same answer on a busy machine.
#
#   bench/callgrind.sh [--build-dir DIR] [--no-build] [--iterations N] [--top N] [--keep DIR] [--smoke] [REGEX]
#
# Builds review_bench in Release with -g into build-prof/ (its own dir: the flags
# differ from build-bench/), then for each review_bench benchmark whose name
# matches REGEX (default '^HandleReview/(mutate|validate)/worker(/iterations:[0-9]+)?$';
# with a fixed count Google Benchmark appends /iterations:N to names) runs it for
# exactly N iterations (default 200) under callgrind, collecting only inside the
# benchmark function (--toggle-collect='*BM_*'), and prints:
#   - instructions per review (collected / N);
#   - the top N (default 15) functions by inclusive instructions per review, with
#     their share, names shortened (no argument lists, no paths).
# --keep DIR keeps the callgrind.out files there for callgrind_annotate or
# kcachegrind. Needs valgrind (installed with apt-get when missing).
# --smoke: the whole path at 5 iterations and the top 3, failing when a figure is
# missing or zero (with --no-build --build-dir DIR: a test of the script, seconds).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source bench/lib.sh

build_dir=build-prof
build=true
iterations=200
top=15
keep_dir=""
smoke=false
filter='^HandleReview/(mutate|validate)/worker(/iterations:[0-9]+)?$'
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=false; shift ;;
    --iterations) iterations="$2"; shift 2 ;;
    --top) top="$2"; shift 2 ;;
    --keep) keep_dir="$2"; shift 2 ;;
    --smoke) smoke=true; iterations=5; top=3; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "callgrind.sh: unknown flag $1" >&2; exit 2 ;;
    *) filter="$1"; shift ;;
  esac
done
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac

if $build; then
  bench_install libbenchmark-dev valgrind
  mkdir -p "$build_dir"
  BENCH_TARGETS=review_bench bench_build "$build_dir" "$build_dir/bench-build.log" -DCMAKE_CXX_FLAGS=-g
fi
out_dir="${keep_dir:-$(mktemp -d)}"
mkdir -p "$out_dir"
[ -n "$keep_dir" ] || trap 'rm -rf "$out_dir"' EXIT

[ -x "$build_dir/review_bench" ] || { echo "callgrind.sh: $build_dir/review_bench is missing (run without --no-build)" >&2; exit 1; }
mapfile -t names < <("$build_dir/review_bench" --iterations="$iterations" --benchmark_list_tests=true \
  --benchmark_filter="$filter" 2>/dev/null)
[ ${#names[@]} -gt 0 ] || { echo "callgrind.sh: no benchmark matches $filter" >&2; exit 2; }

for name in "${names[@]}"; do
  file="$out_dir/callgrind.out.$(tr '/:' '__' <<<"$name")"
  valgrind --tool=callgrind --callgrind-out-file="$file" --toggle-collect='*BM_*' \
    "$build_dir/review_bench" --iterations="$iterations" \
    --benchmark_filter="^$(sed 's/[][().*+?^$|\\]/\\&/g' <<<"$name")\$" >/dev/null 2>"$file.log"
  total="$(sed -n 's/^summary: *//p; s/^totals: *//p' "$file" | head -1)"
  echo
  [ "${total:-0}" -gt 0 ] || { echo "callgrind.sh: nothing collected for $name; see $file.log" >&2; exit 1; }
  echo "${name%/iterations:*}: $((total / iterations)) instructions per review ($iterations iterations)"
  # Inclusive cost per function, heaviest first. The annotate output lists a
  # function once per source file its inlined code comes from, so keep the first
  # (largest); names lose their file, object, argument list and template arguments.
  callgrind_annotate --inclusive=yes --threshold=100 "$file" 2>/dev/null |
    sed -n 's/^ *\([0-9,]*\) ([ 0-9.]*%)  *\(.*\)$/\1\t\2/p' | tr -d ',' |
    awk -F'\t' -v n="$iterations" -v total="$total" -v top="$top" '
      {
        f = $2
        if (f == "PROGRAM TOTALS") next
        sub(/^[^:]*:/, "", f)           # file:
        sub(/ \[[^]]*\]$/, "", f)       # [object]
        gsub(/\(anonymous namespace\)/, "{anonymous}", f)
        sub(/\(.*$/, "", f)             # argument list and the rest
        while (match(f, /<[^<>]*>/)) f = substr(f, 1, RSTART - 1) substr(f, RSTART + RLENGTH)
        gsub(/json_abi_v[0-9_]*::|\[abi:cxx11\]/, "", f)
        if (f == "" || f ~ /^(main|\(below main\)|0x[0-9a-f]+|__libc_start_main.*|benchmark::.*|\(anonymous namespace\)::BM_.*)$/) next
        if (f in seen) next
        seen[f] = 1
        if (++shown <= top) printf "  %9d  %5.1f%%  %s\n", $1 / n, 100 * $1 / total, f
      }' | if $smoke; then tee "$file.top"; else cat; fi  # reads to the end: an early exit would kill the pipeline under pipefail
  if $smoke && [ "$(awk '$1 > 0 && $3 != "" { n++ } END { print n + 0 }' "$file.top")" -ne "$top" ]; then
    echo "callgrind.sh: --smoke: expected $top functions with a cost for $name; see $file" >&2
    exit 1
  fi
done
if $smoke; then echo "callgrind.sh: --smoke: ${#names[@]} benchmarks, every figure present"; fi
