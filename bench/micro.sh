#!/usr/bin/env bash
# In-process benchmark: builds Release into build-bench/ and runs review_bench
# (Google Benchmark over HandleReview and ReviewDecoder::Decode, see
# bench/review_bench.cpp) on bench/fixtures/.
#
#   bench/micro.sh [--build-dir DIR] [--no-build] [--payloads DIR] [--smoke] [review_bench / Google Benchmark flags]
#
# Defaults to 5 repetitions reported as mean, median, stddev and cv
# (--benchmark_repetitions=5 --benchmark_report_aggregates_only=true); any
# --benchmark_* flag given replaces that default. With two or more CPUs it runs
# on CPU 1 (taskset).
# --payloads DIR also times DIR/{worker,head,dupmount,big}.json.
# --smoke (for CTest, so that a broken script fails instead of printing blanks): one repetition of
# 0.01 s each, --no-build; exits 1 if a benchmark is missing, erred or timed zero.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source bench/lib.sh

build_dir=build-bench
build=true
args=()
own_benchmark_flags=false
smoke=false
while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=false; shift ;;
    --smoke) smoke=true; build=false; export BENCH_SMOKE=1; shift ;;
    --payloads) args+=("--payloads=$(cd "$2" && pwd)"); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    --benchmark_*) own_benchmark_flags=true; args+=("$1"); shift ;;
    *) args+=("$1"); shift ;;
  esac
done
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
if $smoke; then
  bench_install jq  # reads review_bench's JSON output; installs nothing under --smoke, only checks
  $own_benchmark_flags || args+=(--benchmark_repetitions=1 --benchmark_min_time=0.01)
  smoke_json="$(mktemp -t ray-webhook-micro.XXXXXX.json)"
  trap 'rm -f "$smoke_json"' EXIT
  args+=(--benchmark_out="$smoke_json" --benchmark_out_format=json)
else
  $own_benchmark_flags || args+=(--benchmark_repetitions=5 --benchmark_report_aggregates_only=true)
fi

if $build; then
  bench_install libbenchmark-dev
  mkdir -p "$build_dir"
  BENCH_TARGETS=review_bench bench_build "$build_dir" "$build_dir/bench-build.log"
fi
[ -x "$build_dir/review_bench" ] || { echo "micro.sh: $build_dir/review_bench is missing (run without --no-build)" >&2; exit 1; }
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
other="$(awk -v b=$((busy1 - busy0)) -v t=$((total1 - total0)) -v hz="$(getconf CLK_TCK)" '
  {o = b - ($1 + $2) * hz; if (o < 0) o = 0; printf "bench: other CPU during the run: %.1f%%\n", t ? 100 * o / t : 0}' \
  "$build_dir/review_bench.time")"
echo "$other" >&2

if $smoke; then
  other="${other#bench: other CPU during the run: }"
  bench_smoke_check "other CPU" "${other%\%}" number
  # Every input on both endpoints, its decode, and the fresh decoder; each timed above zero, none in error.
  for name in HandleReview/mutate/worker HandleReview/validate/worker Decode/worker HandleReview/mutate/worker/fresh_decoder \
              HandleReview/mutate/big Decode/big; do
    jq -e --arg n "$name" '[.benchmarks[] | select(.run_name == $n)] | length > 0' "$smoke_json" >/dev/null ||
      bench_smoke_fail "no $name in review_bench's output"
  done
  count="$(jq '[.benchmarks[] | select(.run_type == "iteration")] | length' "$smoke_json" 2>/dev/null || echo 0)"
  [ "$count" -ge 13 ] || bench_smoke_fail "$count benchmarks ran, want at least 13 (3 for each of the 4 fixtures, 1 fresh decoder)"
  while IFS=$'\t' read -r name real cpu items err; do
    bench_smoke_check "$name real time" "$real"
    bench_smoke_check "$name CPU time" "$cpu"
    bench_smoke_check "$name items/s" "$items"
    [ "$err" = false ] || bench_smoke_fail "$name: error: $err"
  done < <(jq -r '.benchmarks[] | select(.run_type == "iteration") |
    [.name, .real_time, .cpu_time, (.items_per_second // ""), (.error_message // .error_occurred // false)] | @tsv' "$smoke_json")
  bench_smoke_done micro.sh
fi
