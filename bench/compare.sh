#!/usr/bin/env bash
# A/B comparison of server builds under the same load, in rotated turns.
#
#   bench/compare.sh [--rounds N] [--duration S] [--connections C] [--fixture NAME]
#                    [--threads N] [--port P] [--headers kube-apiserver|wrk]
#                    NAME=BINARY[@LEVEL] NAME=BINARY[@LEVEL] ...
#   bench/compare.sh --smoke [--build-dir DIR] [--no-build] [NAME=BINARY[@LEVEL] ...]
#
# Starts every server at once on 127.0.0.1, all pinned to one CPU (wrk on the
# other, when there are two), each with a throw-away certificate and
# --log-level LEVEL (default warn). BINARY is a ray-webhook binary, or a
# ceiling_server (then LEVEL is ignored and it answers the first ray-webhook's
# answer to the fixture as a fixed body). Each server is warmed up for 2 s;
# then, for --rounds rounds (default 9), wrk drives each server in turn for
# --duration seconds (default 5) at --connections keep-alive connections
# (default 8), sending the request kube-apiserver sends (--headers wrk: wrk's
# own headers; bench/post.lua), starting one server later every round, so a slow spell of the
# machine falls on every server alike. It prints one line per round
# (requests/s / CPU µs per request for each server) and then, per server, the
# medians of requests/s, CPU time per request (utime + stime of the server
# from /proc/PID/stat over the run, divided by the requests wrk counted), p50
# and p99, and its VmHWM at the end; then each server against the first, paired
# round by round: the median of its requests/s divided by the first's in the
# same round, and of the first's CPU per request divided by its own.
# Differences smaller than the spread of the rounds are noise (bench/README.md,
# "Load benchmark").
#
# It builds nothing: build the binaries first (bench/load.sh builds into
# build-bench/). Installs wrk and curl when missing.
#
# --smoke (for CTest, so that a broken script fails instead of printing blanks): one round of 1 s,
# no warm-up or drain delay, installs nothing; with no servers given, ceiling_server and ray-webhook at warn and info
# from --build-dir (build-bench); exits 1 if a figure is missing or zero or a server erred.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
source bench/lib.sh

rounds=9
duration=5
connections=8
fixture=worker
threads=64
port=18700
headers=kube-apiserver
specs=()
warmup=2
build_dir=build-bench
smoke=false
for a in "$@"; do
  if [ "$a" = --smoke ]; then
    smoke=true rounds=1 duration=1 threads=4 warmup=0
    export BENCH_SMOKE=1
  fi
done
while [ $# -gt 0 ]; do
  case "$1" in
    --rounds) rounds="$2"; shift 2 ;;
    --duration) duration="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --fixture) fixture="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --headers) headers="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build|--smoke) shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "compare.sh: unknown flag $1 (try --help)" >&2; exit 2 ;;
    *=*) specs+=("$1"); shift ;;
    *) echo "compare.sh: expected NAME=BINARY[@LEVEL], got $1" >&2; exit 2 ;;
  esac
done
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
if $smoke && [ ${#specs[@]} -eq 0 ]; then
  specs=("ceiling=$build_dir/ceiling_server" "warn=$build_dir/ray-webhook" "info=$build_dir/ray-webhook@info")
fi
[ ${#specs[@]} -ge 2 ] || { echo "compare.sh: give at least two NAME=BINARY[@LEVEL] (try --help)" >&2; exit 2; }
for n in "$rounds" "$duration" "$connections"; do
  [ "$n" -gt 0 ] 2>/dev/null || { echo "compare.sh: --rounds, --duration and --connections take positive numbers" >&2; exit 2; }
done
body="$root/bench/fixtures/$fixture.json"
[ -s "$body" ] || { echo "compare.sh: no such fixture: $body" >&2; exit 2; }

bench_install wrk curl
tmp="$(mktemp -d -t ray-webhook-compare.XXXXXX)"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
bash certs/generate.sh --out "$tmp/certs" >/dev/null 2>&1

case "$headers" in kube-apiserver|wrk) ;; *) echo "compare.sh: --headers is kube-apiserver or wrk" >&2; exit 2 ;; esac
if [ "$(nproc)" -ge 2 ]; then server_pin=(taskset -c 0); wrk_pin=(taskset -c 1); else server_pin=(); wrk_pin=(); fi

# One pass over the specs: name, binary, level, and whether it is ray-webhook
# (it answers `review`; the first one's answer is the ceiling's fixed body).
names=()
bins=()
levels=()
is_webhook=()
ports=()
answer=""
for spec in "${specs[@]}"; do
  rest="${spec#*=}"
  bin="${rest%@*}"
  [ -x "$bin" ] || { echo "compare.sh: $bin is not an executable" >&2; exit 2; }
  names+=("${spec%%=*}")
  bins+=("$bin")
  if [ "$rest" != "$bin" ]; then levels+=("${rest##*@}"); else levels+=(warn); fi
  if "$bin" review --mutate "$body" >"$tmp/answer-${#bins[@]}.json" 2>/dev/null; then
    is_webhook+=(true)
    [ -n "$answer" ] || answer="$tmp/answer-${#bins[@]}.json"
  else
    is_webhook+=(false)
  fi
  ports+=("$port")
  port=$((port + 1))
done
[ -n "$answer" ] || { echo "compare.sh: no ray-webhook binary among the servers" >&2; exit 2; }

tls=(--bind 127.0.0.1 --tls-cert "$tmp/certs/tls.crt" --tls-key "$tmp/certs/tls.key" --threads "$threads")
for i in "${!bins[@]}"; do
  if ${is_webhook[$i]}; then
    # Builds from before the probe port have no --probe-port.
    probe=()
    "${bins[$i]}" --help 2>/dev/null | grep -- --probe-port >/dev/null && probe=(--probe-port 0)
    # Under --smoke, stop at once, not after 5 s of draining (builds before it have no --drain-delay).
    $smoke && "${bins[$i]}" serve --help 2>&1 | grep -- --drain-delay >/dev/null && probe+=(--drain-delay 0)
    "${server_pin[@]}" "${bins[$i]}" serve --port "${ports[$i]}" "${probe[@]}" "${tls[@]}" --log-level "${levels[$i]}" \
      >"$tmp/server-$i.log" 2>&1 &
  else
    "${server_pin[@]}" "${bins[$i]}" --port "${ports[$i]}" "${tls[@]}" --body "$answer" >"$tmp/server-$i.log" 2>&1 &
  fi
  pids+=($!)
done
for i in "${!specs[@]}"; do
  for _ in $(seq 100); do
    curl -sk -o /dev/null -H 'Content-Type: application/json' --data-binary @"$body" \
      "https://127.0.0.1:${ports[$i]}/mutate" && break
    kill -0 "${pids[$i]}" 2>/dev/null || { echo "compare.sh: ${names[$i]} exited:" >&2; tail -5 "$tmp/server-$i.log" >&2; exit 1; }
    sleep 0.1
  done
  if $smoke; then
    code="$(curl -sk -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' --data-binary @"$body" \
      "https://127.0.0.1:${ports[$i]}/mutate" || true)"
    [ "$code" = 200 ] || bench_smoke_fail "${names[$i]} answered $code to the fixture"
  fi
  [ "$warmup" = 0 ] ||
    "${wrk_pin[@]}" wrk -t1 -c"$connections" -d"${warmup}s" -s bench/post.lua "https://127.0.0.1:${ports[$i]}/mutate" -- \
      "$body" "$headers" >/dev/null 2>&1
done

clk_tck="$(getconf CLK_TCK)"
raw="$tmp/raw"
: >"$raw"
n=${#specs[@]}
echo "$fixture.json, $connections connections, $headers request headers, $rounds rounds of ${duration}s, requests/s / CPU µs per request:"
for r in $(seq "$rounds"); do
  line="round $r:"
  for k in $(seq 0 $((n - 1))); do
    i=$(( (k + r) % n ))
    t0="$(awk '{print $14 + $15}' "/proc/${pids[$i]}/stat")"
    out="$("${wrk_pin[@]}" wrk -t1 -c"$connections" -d"${duration}s" -s bench/post.lua \
      "https://127.0.0.1:${ports[$i]}/mutate" -- "$body" "$headers" 2>&1)"
    t1="$(awk '{print $14 + $15}' "/proc/${pids[$i]}/stat")"
    result="$(grep '^RESULT' <<<"$out" || true)"
    [ -n "$result" ] || { echo "compare.sh: wrk gave no result for ${names[$i]}:" >&2; tail -5 <<<"$out" >&2; exit 1; }
    q="$(bench_result_field requests "$result")"
    rps="$(bench_result_field rps "$result")"
    p50="$(bench_result_field p50_us "$result")"
    p99="$(bench_result_field p99_us "$result")"
    us="$(awk -v a="$t0" -v b="$t1" -v n="$q" -v t="$clk_tck" 'BEGIN { printf "%.1f", (n > 0) ? (b - a) / t * 1e6 / n : 0 }')"
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$i" "$rps" "$us" "$p99" "$r" "$p50" >>"$raw"
    if $smoke; then
      for f in rps p50_us p99_us; do bench_smoke_check "${names[$i]} round $r $f" "$(bench_result_field $f "$result")"; done
      bench_smoke_check "${names[$i]} round $r CPU per request" "$us"
      for f in connect read write status timeout; do
        bench_smoke_check "${names[$i]} round $r $f errors (status: not 2xx/3xx)" "$(bench_result_field $f "$result")" zero
      done
    fi
    line="$line ${names[$i]}=${rps%.*}/$us"
  done
  echo "$line"
done

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
echo
printf '%-18s %12s %12s %10s %10s %10s\n' server requests/s "CPU us/req" "p50 ms" "p99 ms" "VmHWM MB"
for i in $(seq 0 $((n - 1))); do
  rps="$(awk -F'\t' -v k="$i" '$1 == k { print $2 }' "$raw" | median)"
  us="$(awk -F'\t' -v k="$i" '$1 == k { print $3 }' "$raw" | median)"
  p50="$(awk -F'\t' -v k="$i" '$1 == k { print $6 / 1000 }' "$raw" | median)"
  p99="$(awk -F'\t' -v k="$i" '$1 == k { print $4 / 1000 }' "$raw" | median)"
  hwm="$(awk '/^VmHWM/ { printf "%.1f", $2 / 1024 }' "/proc/${pids[$i]}/status")"
  printf '%-18s %12.0f %12.1f %10.3f %10.2f %10s\n' "${names[$i]}" "$rps" "$us" "$p50" "$p99" "$hwm"
  if $smoke; then
    for f in rps us p50 p99 hwm; do bench_smoke_check "${names[$i]} median $f" "${!f}"; done
  fi
done

# Paired by round: each server against the first one in the same round, whose
# turns lie seconds apart, so a slow spell of the machine that spans a round
# cancels out of the ratio; the median of the ratios is steadier than the
# ratio of the medians above.
echo
echo "against ${names[0]}, round by round (median; requests/s ratio, and ${names[0]}'s CPU per request divided by the server's):"
for i in $(seq 1 $((n - 1))); do
  ratios="$(awk -F'\t' -v k="$i" '
    $1 == 0 { rps0[$5] = $2; us0[$5] = $3 }
    $1 == k { rps[$5] = $2; us[$5] = $3 }
    END { for (r in rps) if ((r in rps0) && rps0[r] > 0 && us[r] > 0) printf "%d %.4f %.4f\n", r, rps[r] / rps0[r], us0[r] / us[r] }' "$raw" | sort -n)"
  rps_share="$(awk '{ print $2 }' <<<"$ratios" | median)"
  cpu_share="$(awk '{ print $3 }' <<<"$ratios" | median)"
  turns="$(awk '{ printf "%s%.0f", (NR > 1) ? " " : "", $2 * 100 }' <<<"$ratios")"
  printf '%-16s requests/s %5.1f %%, CPU %5.1f %% (requests/s by round: %s)\n' "${names[$i]}" \
    "$(awk -v x="$rps_share" 'BEGIN { print x * 100 }')" "$(awk -v x="$cpu_share" 'BEGIN { print x * 100 }')" "$turns"
  if $smoke; then
    bench_smoke_check "${names[$i]} requests/s against ${names[0]}" "$rps_share"
    bench_smoke_check "${names[$i]} CPU against ${names[0]}" "$cpu_share"
    [ "$(wc -w <<<"$turns")" -eq "$rounds" ] || bench_smoke_fail "${names[$i]}: $(wc -w <<<"$turns") paired rounds, want $rounds"
  fi
done
if $smoke; then bench_smoke_done compare.sh; fi
