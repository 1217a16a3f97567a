#!/usr/bin/env bash
# Instructions per request of the running server, with valgrind's callgrind:
# ray-webhook at each log level and the bare cpp-httplib ceiling, side by side.
#
#   bench/server-callgrind.sh [--requests N] [--log-levels "warn info"] [--fixture NAME]
#                             [--top N] [--build-dir DIR] [--no-build] [--keep DIR] [--smoke]
#
# For each server: starts it under `valgrind --tool=callgrind` on 127.0.0.1 with a
# throw-away certificate and 4 threads; sends a warm-up of 20 reviews of the
# fixture (default worker, from bench/fixtures/); then, with the counters zeroed
# (callgrind_control -z) and dumped (-d) around each, 20 reviews and 20 + N (default
# N 300), each batch from one curl process over one keep-alive connection and
# each review the request kube-apiserver sends (path, ?timeout=, headers); stops
# the server. The difference of the two windows is what N reviews cost without a
# TLS handshake. It prints the instructions per request (all threads, the log
# writer included) and the --top N (default 12) functions that cost the most on
# their own (self cost) per request. The ceiling answers ray-webhook's own answer to the
# fixture as a fixed body, as in bench/load.sh.
#
# Instruction counts do not depend on what else runs on the machine. They are
# not times: a `rep movsb` counts once per byte, and valgrind runs simdjson's
# haswell kernels (it has no AVX-512). bench/journal/35-info-line-by-hand.md and
# bench/journal/36-kept-out-startup-at-o2.md.
# Builds Release into build-bench/ like bench/load.sh; --keep DIR keeps the
# callgrind.out files for callgrind_annotate. Installs valgrind and curl when missing.
# --smoke: the whole path at 20 requests, the warn level and the top 3, failing when a
# figure is missing or zero (with --no-build --build-dir DIR: a test of the script).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source bench/lib.sh

requests=300
log_levels="warn info"
fixture=worker
top=12
build_dir=build-bench
build=true
keep_dir=""
smoke=false
while [ $# -gt 0 ]; do
  case "$1" in
    --requests) requests="$2"; shift 2 ;;
    --log-levels) log_levels="$2"; shift 2 ;;
    --fixture) fixture="$2"; shift 2 ;;
    --top) top="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=false; shift ;;
    --keep) keep_dir="$2"; shift 2 ;;
    --smoke) smoke=true; requests=20; log_levels=warn; top=3; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "server-callgrind.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
body="$root/bench/fixtures/$fixture.json"
[ -s "$body" ] || { echo "server-callgrind.sh: no such fixture: $body" >&2; exit 2; }
[ "$requests" -gt 0 ] 2>/dev/null || { echo "server-callgrind.sh: --requests must be a positive number" >&2; exit 2; }

bench_install valgrind curl
tmp="$(mktemp -d -t ray-webhook-callgrind.XXXXXX)"
out_dir="${keep_dir:-$tmp}"
mkdir -p "$out_dir"
server_pid=""
cleanup() {
  if [ -n "$server_pid" ]; then kill -TERM "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT

if $build; then
  BENCH_TARGETS="ray-webhook ceiling_server" bench_build "$build_dir" "$tmp/build.log"
fi
for b in ray-webhook ceiling_server; do
  [ -x "$build_dir/$b" ] || { echo "server-callgrind.sh: $build_dir/$b is missing (run without --no-build)" >&2; exit 1; }
done
bash certs/generate.sh --out "$tmp/certs" >/dev/null 2>&1
"$build_dir/ray-webhook" review --mutate "$body" >"$tmp/answer.json"
tls=(--bind 127.0.0.1 --tls-cert "$tmp/certs/tls.crt" --tls-key "$tmp/certs/tls.key" --threads 4)

# post N PORT: N reviews over one connection (curl reuses it across --next),
# each the request kube-apiserver sends, as bench/post.lua sends it.
post() {
  local n="$1" port="$2" args=() i
  for i in $(seq "$n"); do
    [ "$i" -gt 1 ] && args+=(--next)
    args+=(-sk -o /dev/null -H "Content-Type: application/json" -H "User-Agent: kube-apiserver-admission"
      -H "Accept: application/json, */*" -H "Accept-Encoding: gzip" --data-binary @"$body"
      "https://127.0.0.1:$port/mutate?timeout=5s")
  done
  curl "${args[@]}"
}

# measure NAME PORT CMD...: one server under callgrind; prints its figures.
measure() {
  local name="$1" port="$2" file="$out_dir/callgrind.out.${1//\//_}" i
  shift 2
  valgrind --tool=callgrind --callgrind-out-file="$file" "$@" >"$file.log" 2>&1 &
  server_pid=$!
  for i in $(seq 600); do
    curl -sk -o /dev/null -H "Content-Type: application/json" --data-binary @"$body" "https://127.0.0.1:$port/mutate" && break
    kill -0 "$server_pid" 2>/dev/null || { echo "server-callgrind.sh: $name exited; see $file.log" >&2; exit 1; }
    sleep 0.2
  done
  post 20 "$port"
  # Each curl process opens a connection of its own, and its TLS handshake is
  # counted with its requests: two windows, of 20 and of 20 + N requests, and
  # their difference is what N requests cost.
  callgrind_control -z "$server_pid" >/dev/null 2>&1
  post 20 "$port"
  callgrind_control -d "$server_pid" >/dev/null 2>&1
  post "$((20 + requests))" "$port"
  callgrind_control -d "$server_pid" >/dev/null 2>&1
  kill -TERM "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=""
  local short="$file.1" long="$file.2"
  if [ ! -s "$short" ] || [ ! -s "$long" ]; then
    echo "server-callgrind.sh: no dumps for $name; see $file.log" >&2
    exit 1
  fi
  # Self cost per function of each window, "cost<TAB>name".
  local w
  for w in "$short" "$long"; do
    callgrind_annotate --threshold=100 "$w" 2>/dev/null |
      sed -n 's/^ *\([0-9,]*\) ([ 0-9.]*%)  *\(.*\)$/\1\t\2/p' | tr -d ',' >"$w.self"
  done
  local total
  total="$(awk -F'\t' '$2 == "PROGRAM TOTALS" { if (FILENAME == ARGV[1]) a = $1; else b = $1 } END { print b - a }' \
    "$short.self" "$long.self")"
  if $smoke && ! [ "${total:-0}" -gt 0 ] 2>/dev/null; then
    echo "server-callgrind.sh: --smoke: no instructions counted for $name; see $file.log" >&2
    exit 1
  fi
  echo
  echo "$name: $((total / requests)) instructions per request ($requests requests)"
  # The difference per function; thread entry frames (clone, start_thread, the
  # pool's loop) carry nearly the whole total and are left out.
  awk -F'\t' -v n="$requests" -v total="$total" '
      FILENAME == ARGV[1] { a[$2] += $1; next }
      { b[$2] += $1 }
      END { for (f in b) { d = b[f] - a[f]; if (f != "PROGRAM TOTALS" && d < total / 2 && d > 0) printf "%d\t%s\n", d, f } }' \
    "$short.self" "$long.self" | sort -rn |
    awk -F'\t' -v n="$requests" -v top="$top" 'NR <= top {
        f = $2
        obj = f; sub(/.*\[/, "", obj); sub(/\]$/, "", obj); sub(/.*\//, "", obj)
        sub(/^[^:]*:/, "", f); sub(/\(.*$/, "", f); sub(/ \[[^]]*\]$/, "", f)
        printf "  %8d  %s  (%s)\n", $1 / n, f, obj
      }' | if $smoke; then tee "$file.top"; else cat; fi  # reads to the end: an early exit would fail the pipeline under pipefail
  if $smoke && [ "$(awk '$1 > 0 && $2 != "" { n++ } END { print n + 0 }' "$file.top")" -ne "$top" ]; then
    echo "server-callgrind.sh: --smoke: expected $top functions with a cost for $name; see $file" >&2
    exit 1
  fi
}

port=18600
for level in $log_levels; do
  measure "ray-webhook/$level" "$port" "$build_dir/ray-webhook" serve --port "$port" --probe-port 0 "${tls[@]}" --log-level "$level"
  port=$((port + 1))
done
measure ceiling "$port" "$build_dir/ceiling_server" --port "$port" "${tls[@]}" --body "$tmp/answer.json"
if $smoke; then echo "server-callgrind.sh: --smoke: every figure present"; fi
