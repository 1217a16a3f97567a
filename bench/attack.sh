#!/usr/bin/env bash
# Review latency and peak RSS of the real server under each attack of
# tests/server (hostile framings, stalled and silent connections, a soft
# open-file limit, pipelining), beside the same figures without attack.
#
#   bench/attack.sh [--reviews N] [--server BIN]
#
# Builds ray-webhook in Release into build-bench/ unless --server names a
# binary, then runs bench/attack.py (see there for what each row measures).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source bench/lib.sh

reviews=2000
server=""
while [ $# -gt 0 ]; do
  case "$1" in
    --reviews) reviews="$2"; shift 2 ;;
    --server) server="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "attack.sh: unknown flag $1 (try --help)" >&2; exit 2 ;;
  esac
done
bench_install python3 openssl
if [ -z "$server" ]; then
  BENCH_TARGETS=ray-webhook bench_build build-bench build-bench.log
  server=build-bench/ray-webhook
fi
echo "ray-webhook: $server ($(bench_core_build "$(dirname "$server")")), $(nproc) CPUs, $(date -u +%Y-%m-%dT%H:%MZ)"
exec python3 bench/attack.py --server "$server" --certs certs/generate.sh --fixtures tests/fixtures --reviews "$reviews"
