#!/usr/bin/env bash
# In-process benchmark: builds Release into build-bench/ and runs review_bench
# (Google Benchmark over HandleReview and ReviewDecoder::Decode, see
# bench/review_bench.cpp) on bench/fixtures/.
#
#   bench/micro.sh [--build-dir DIR] [--no-build] [--payloads DIR] [review_bench / Google Benchmark flags]
#
# Defaults to 5 repetitions reported as mean, median, stddev and cv
# (--benchmark_repetitions=5 --benchmark_report_aggregates_only=true); any
# --benchmark_* flag given replaces that default. With two or more CPUs it runs
# on CPU 1 (taskset).
# --payloads DIR also times DIR/{worker,head,dupmount,big}.json.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source bench/lib.sh

build_dir=build-bench
build=true
args=()
own_benchmark_flags=false
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=false; shift ;;
    --payloads) args+=("--payloads=$(cd "$2" && pwd)"); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --benchmark_*) own_benchmark_flags=true; args+=("$1"); shift ;;
    *) args+=("$1"); shift ;;
  esac
done
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
$own_benchmark_flags || args+=(--benchmark_repetitions=5 --benchmark_report_aggregates_only=true)

if $build; then
  bench_install libbenchmark-dev
  mkdir -p "$build_dir"
  BENCH_TARGETS=review_bench bench_build "$build_dir" "$build_dir/bench-build.log"
fi
pin=()
[ "$(nproc)" -ge 2 ] && pin=(taskset -c 1)
echo "bench: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(bench_core_build "$build_dir")" >&2
# Afterwards, the CPU time used by anything else during the run, as a share of all
# CPUs (/proc/stat): above a few percent, another job shared the machine and the
# times are high and noisy.
busy_total() { awk 'NR == 1 {t = 0; for (i = 2; i <= 9; i++) t += $i; print t - $5 - $6, t}' /proc/stat; }
read -r busy0 total0 < <(busy_total)
TIMEFORMAT='%U %S'
{ time "${pin[@]}" "$build_dir/review_bench" "${args[@]}" 2>&3; } 3>&2 2>"$build_dir/review_bench.time"
read -r busy1 total1 < <(busy_total)
awk -v b=$((busy1 - busy0)) -v t=$((total1 - total0)) -v hz="$(getconf CLK_TCK)" '
  {o = b - ($1 + $2) * hz; if (o < 0) o = 0; printf "bench: other CPU during the run: %.1f%%\n", t ? 100 * o / t : 0}' \
  "$build_dir/review_bench.time" >&2
