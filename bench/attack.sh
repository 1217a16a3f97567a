#!/usr/bin/env bash
# Review latency and peak RSS of the real server under each attack of
# tests/server (hostile framings, stalled and silent connections, a soft
# open-file limit, pipelining), beside the same figures without attack.
#
#   bench/attack.sh [--reviews N] [--server BIN] [--build-dir DIR] [--no-build] [--smoke]
#
# Builds ray-webhook in Release into --build-dir (build-bench/) unless --server
# names a binary or --no-build is given, then runs bench/attack.py (see there for
# what each row measures).
# --smoke (for CTest, so that a broken script fails instead of printing blanks): every row with
# --reviews 20, --no-build, installs nothing; exits 1 if a figure is missing, zero or infinite (not 200).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source bench/lib.sh

reviews=2000
server=""
build_dir=build-bench
build=true
smoke=()
for a in "$@"; do
  if [ "$a" = --smoke ]; then
    smoke=(--smoke) reviews=20 build=false
    export BENCH_SMOKE=1
  fi
done
while [ $# -gt 0 ]; do
  case "$1" in
    --reviews) reviews="$2"; shift 2 ;;
    --server) server="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=false; shift ;;
    --smoke) shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "attack.sh: unknown flag $1 (try --help)" >&2; exit 2 ;;
  esac
done
bench_install python3 openssl
if [ -z "$server" ]; then
  if $build; then
    BENCH_TARGETS=ray-webhook bench_build "$build_dir" "$build_dir.log"
  fi
  server="$build_dir/ray-webhook"
fi
[ -x "$server" ] || { echo "attack.sh: $server is missing (run without --no-build)" >&2; exit 1; }
echo "ray-webhook: $server ($(bench_core_build "$(dirname "$server")")), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
exec python3 bench/attack.py --server "$server" --certs certs/generate.sh --fixtures tests/fixtures --reviews "$reviews" "${smoke[@]}"
