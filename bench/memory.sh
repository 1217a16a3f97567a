#!/usr/bin/env bash
# Memory under large reviews: what a burst of them leaves behind.
#
#   bench/memory.sh                        # big.json (195 KB) at 64 connections, then a 2 MB review at 16
#   bench/memory.sh --sizes "2048" --connections 64
#
# Builds Release into build-bench/ (like load.sh), makes a throw-away
# certificate, and for each size in --sizes (KiB; 195 means bench/fixtures/big.json,
# any other size is big.json padded with annotations of 900 characters up to
# about that size, with jq) starts `ray-webhook serve --log-level warn` on
# 127.0.0.1, pinned to CPU 0 with wrk on CPU 1 when there are two CPUs, and:
#   1. drives it with wrk for --duration seconds at --connections, POSTing that
#      review to /mutate over keep-alive HTTPS (bench/post.lua);
#   2. prints requests/s, non-2xx answers, and the server's VmHWM (peak) and
#      VmRSS one second after the burst and again --settle seconds later (the
#      server gives back idle decoders' grown buffers every 5 s, so within 10 s);
#   3. drives it with the 5.6 KB worker review for --duration seconds and
#      prints requests/s and VmRSS, to show what the burst left for the reviews after it;
#   4. stops the server.
# Defaults: --sizes "195 2048" --connections "64 16" (one per size, the last
# repeated) --duration 3 --settle 11 --port 18543 --build-dir build-bench.
# --smoke (for CTest, so that a broken script fails instead of printing blanks): --sizes "195 256"
# --connections 4 --duration 1 --settle 1, no drain delay, --no-build, installs nothing; exits 1 if a figure is missing or zero or an answer was not 2xx.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

sizes="195 2048"
connections="64 16"
duration=3
settle=11
port=18543
build_dir=build-bench
build=true
smoke=false
smoke_serve=()
for a in "$@"; do
  if [ "$a" = --smoke ]; then
    smoke=true build=false sizes="195 256" connections=4 duration=1 settle=1
    smoke_serve=(--drain-delay 0)  # stop at once, not after 5 s of draining
    export BENCH_SMOKE=1
  fi
done
while [ $# -gt 0 ]; do
  case "$1" in
    --sizes) sizes="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --settle) settle="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=false; shift ;;
    --smoke) shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "memory.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac

source bench/lib.sh
bench_install wrk curl jq util-linux

tmp="$(mktemp -d -t ray-webhook-memory.XXXXXX)"
server=""
cleanup() {
  if [ -n "$server" ]; then kill -TERM "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if $build; then
  BENCH_TARGETS=ray-webhook bench_build "$build_dir" "$tmp/build.log" || exit 1
fi
webhook_bin="$build_dir/ray-webhook"
[ -x "$webhook_bin" ] || { echo "memory.sh: $webhook_bin is missing (run without --no-build)" >&2; exit 1; }
bash certs/generate.sh --out "$tmp/certs" >/dev/null 2>&1

if [ "$(nproc)" -ge 2 ]; then server_pin=(taskset -c 0); wrk_pin=(taskset -c 1); else server_pin=(); wrk_pin=(); fi

# review_of KIB: the path of a review of about KIB kilobytes.
review_of() {
  local kib="$1" out="$tmp/review-$1.json"
  if [ "$kib" = 195 ]; then echo "$root/bench/fixtures/big.json"; return; fi
  local base extra
  base="$(wc -c <bench/fixtures/big.json)"
  extra=$(( (kib * 1024 - base) / 950 ))
  [ "$extra" -lt 0 ] && extra=0
  jq -c --argjson n "$extra" '.request.object.metadata.annotations +=
    ([range(0; $n)] | map({key: "pad.example.com/a\(.)", value: ("x" * 900)}) | from_entries)' \
    bench/fixtures/big.json >"$out"
  echo "$out"
}

status() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
mb() { awk -v k="$1" 'BEGIN {printf "%.1f", k / 1024}'; }

# drive FILE CONNS: one wrk run; prints "requests/s non-2xx".
drive() {
  local out
  out="$("${wrk_pin[@]}" wrk -t1 -c"$2" -d"${duration}s" -s bench/post.lua "https://127.0.0.1:$port/mutate" -- "$1")"
  echo "$(awk '/^Requests\/sec:/ {print $2}' <<<"$out") $(awk '/Non-2xx/ {print $NF}' <<<"$out" | grep . || echo 0)"
}

printf '%-8s %5s %12s %8s %14s %14s %14s %14s %14s\n' review conns "requests/s" "non-2xx" "VmHWM MB" "RSS +1s MB" \
  "RSS +$((settle + 1))s MB" "worker req/s" "RSS after MB"
set -- $connections
for kib in $sizes; do
  c="${1:-16}"
  [ $# -gt 1 ] && shift
  file="$(review_of "$kib")"
  "${server_pin[@]}" "$webhook_bin" serve --bind 127.0.0.1 --port "$port" --probe-port 0 --tls-cert "$tmp/certs/tls.crt" \
    --tls-key "$tmp/certs/tls.key" --log-level warn "${smoke_serve[@]}" >"$tmp/server.log" 2>&1 &
  server=$!
  for _ in $(seq 100); do
    curl -sk -o /dev/null "https://127.0.0.1:$port/healthz" && break
    sleep 0.1
  done
  if $smoke; then
    code="$(curl -sk -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @"$file" \
      "https://127.0.0.1:$port/mutate" || true)"
    if [ "$code" != 200 ]; then
      bench_smoke_fail "ray-webhook answered $code to the ${kib} KiB review (server log: $(tail -3 "$tmp/server.log"))"
      bench_smoke_done memory.sh
    fi
  fi
  read -r rps bad < <(drive "$file" "$c")
  sleep 1
  hwm="$(status "$server" VmHWM)"
  rss1="$(status "$server" VmRSS)"
  sleep "$settle"
  rss2="$(status "$server" VmRSS)"
  read -r wrps wbad < <(drive bench/fixtures/worker.json "$c")
  rss3="$(status "$server" VmRSS)"
  kill -TERM "$server"; wait "$server" 2>/dev/null || true; server=""
  printf '%-8s %5s %12s %8s %14s %14s %14s %14s %14s\n' "$(( $(wc -c <"$file") / 1024 ))K" "$c" "$rps" "$bad" \
    "$(mb "$hwm")" "$(mb "$rss1")" "$(mb "$rss2")" "$wrps" "$(mb "$rss3")"
  if $smoke; then
    bench_smoke_check "${kib}K requests/s" "$rps"
    bench_smoke_check "${kib}K non-2xx" "$bad" zero
    bench_smoke_check "${kib}K VmHWM" "$hwm"
    bench_smoke_check "${kib}K RSS +1s" "$rss1"
    bench_smoke_check "${kib}K RSS +$((settle + 1))s" "$rss2"
    bench_smoke_check "${kib}K worker requests/s" "$wrps"
    bench_smoke_check "${kib}K worker non-2xx" "$wbad" zero
    bench_smoke_check "${kib}K RSS after" "$rss3"
  fi
done
if $smoke; then bench_smoke_done memory.sh; fi
