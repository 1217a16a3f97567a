#!/usr/bin/env bash
# ray-webhook against its peers and the transport ceiling, side by side:
#
#   bench/peers.sh [--rounds N] [--duration S] [--fixture NAME] [--build-dir DIR] [--no-build] [--smoke]
#
# Builds ray-webhook in Release into build-bench/ (or --build-dir DIR; bench/lib.sh)
# and the Go peers into DIR/peers/ (bench/peers/build.sh), installs nginx-light
# and wrk when missing, then runs bench/compare.sh with ray-webhook first,
# controller-runtime-peer, stdlib-peer and bench/nginx_ceiling.sh: at 64
# connections and at one with the request kube-apiserver sends, and at 64 with
# wrk's own headers (a second, labelled run). Defaults: 9 rounds of 5 s, the
# worker fixture. Then the issue's targets, each from compare.sh's medians:
# ray-webhook's requests/s over controller-runtime's and over nginx's (paired
# by round), its p99 over nginx's, and at one connection its p50 over nginx's.
# --smoke: the whole path at 1 round of 1 s, the Go peers built into a temporary
# dir, failing when a figure is missing or zero.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source bench/lib.sh

rounds=9
duration=5
fixture=worker
build=1
build_dir=build-bench
smoke=0
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --fixture) fixture="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --smoke) smoke=1; rounds=1; duration=1; export BENCH_SMOKE=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "peers.sh: unknown flag $1 (try --help)" >&2; exit 2 ;;
  esac
done
bench_install wrk curl nginx-light
out="$(mktemp -d -t ray-webhook-peers.XXXXXX)"
trap 'rm -rf "$out"' EXIT
peers="$build_dir/peers"
if [ "$build" = 1 ]; then
  BENCH_TARGETS=ray-webhook bench_build "$build_dir" "$build_dir.log"
fi
if [ "$smoke" = 1 ]; then
  peers="$out/peers"
  bash bench/peers/build.sh "$peers"
elif [ "$build" = 1 ]; then
  bash bench/peers/build.sh "$peers"
fi
for b in "$build_dir/ray-webhook" "$peers/controller-runtime-peer" "$peers/stdlib-peer"; do
  [ -x "$b" ] || { echo "peers.sh: $b is missing (run without --no-build)" >&2; exit 1; }
done
servers=(ray-webhook="$build_dir/ray-webhook" controller-runtime="$peers/controller-runtime-peer"
  stdlib="$peers/stdlib-peer" nginx=bench/nginx_ceiling.sh)
echo "ray-webhook: $build_dir/ray-webhook ($(bench_core_build "$build_dir")), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
for run in "64 kube-apiserver" "1 kube-apiserver" "64 wrk"; do
  read -r c h <<<"$run"
  echo
  bash bench/compare.sh --rounds "$rounds" --duration "$duration" --fixture "$fixture" --connections "$c" \
    --headers "$h" "${servers[@]}" | tee "$out/$c-$h"
done

# field FILE SERVER COLUMN: a column of compare.sh's medians table (2 requests/s, 4 p50, 5 p99)
field() { awk -v s="$2" -v k="$3" '$1 == s && NF == 6 { print $k }' "$1"; }
share() { sed -n "s/^$2 *requests\/s *\([0-9.]*\) %.*/\1/p" "$1"; } # paired requests/s share, percent
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf (b > 0) ? "%.2f" : "-", a / b }'; }
f64="$out/64-kube-apiserver" f1="$out/1-kube-apiserver"
t_cr="$(ratio 100 "$(share "$f64" controller-runtime)")"
t_nginx="$(ratio 100 "$(share "$f64" nginx)")"
t_p99="$(ratio "$(field "$f64" ray-webhook 5)" "$(field "$f64" nginx 5)")"
t_p50="$(ratio "$(field "$f1" ray-webhook 4)" "$(field "$f1" nginx 4)")"
t_rss="$(field "$f64" ray-webhook 6)"
echo
echo "targets, kube-apiserver's request:"
echo "  64 connections: ray-webhook / controller-runtime requests/s (paired) ${t_cr}x (target >= 3)"
echo "  64 connections: ray-webhook / nginx requests/s (paired) ${t_nginx}x (target >= 0.6)"
echo "  64 connections: ray-webhook p99 / nginx p99 ${t_p99}x (target <= 2)"
echo "  1 connection:   ray-webhook p50 / nginx p50 ${t_p50}x (target <= 1.2)"
echo "  peak RSS under load: ray-webhook $t_rss MB (target <= 16)"
if [ "$smoke" = 1 ]; then
  # Every server's medians in every run, and every target, a number above zero.
  for f in "$out/64-kube-apiserver" "$out/1-kube-apiserver" "$out/64-wrk"; do
    for s in ray-webhook controller-runtime stdlib nginx; do
      for k in 2 3 4 5 6; do bench_smoke_check "${f##*/} $s column $k" "$(field "$f" "$s" "$k")"; done
    done
  done
  for v in "cr=$t_cr" "nginx=$t_nginx" "p99=$t_p99" "p50=$t_p50" "rss=$t_rss"; do
    bench_smoke_check "target ${v%%=*}" "${v#*=}"
  done
  bench_smoke_done peers.sh
fi
