#!/usr/bin/env bash
# Load benchmark: ray-webhook against the bare cpp-httplib ceiling, driven by wrk.
#
#   bench/load.sh [--duration S] [--connections "1 64"] [--repeat N] [--warmup S]
#                 [--fixture NAME] [--payloads DIR] [--log-levels "warn info"]
#                 [--threads N] [--wrk-threads N] [--port P] [--max-other PCT]
#                 [--retries N] [--build-dir DIR] [--no-build] [--keep] [--smoke]
#
# What it does, on 127.0.0.1 only:
#   1. installs what is missing with apt-get (scripts/install-deps.sh, plus wrk,
#      libbenchmark-dev, curl, jq);
#   2. builds Release into build-bench/ (-DRAY_WEBHOOK_BUILD_BENCH=ON
#      -DRAY_WEBHOOK_BUILD_TESTS=OFF; when the top-level CMakeLists.txt does not add
#      bench/ yet, bench/ is configured on its own, which pulls the project in);
#   3. makes a throw-away certificate (certs/generate.sh --out into a temp dir);
#   4. starts every server at once, all pinned to one CPU: ceiling_server (a
#      fixed body: ray-webhook's own answer to the fixture, so both send the
#      same bytes) and ray-webhook serve --log-level L for each L of
#      --log-levels, each with --threads threads; checks one answer of each
#      with curl and warms each up; then, at each connection count, --repeat
#      times, runs wrk for --duration seconds against each server in turn,
#      starting one server later every repetition, so that the servers are
#      measured side by side, none always runs right after the others, and a
#      slow spell of the machine falls on all of them alike;
#   5. prints one table: requests/s, p50, p99, errors, the server's CPU time per
#      request (utime + stime from /proc/PID/stat over the run, divided by the
#      requests wrk counted), its peak RSS (VmHWM from /proc/PID/status, read after
#      the row's last run) and "other CPU" per (server, connections), medians when
#      --repeat > 1; then ray-webhook as a share of the ceiling, in requests/s and
#      in CPU per request (the ceiling's divided by ray-webhook's), and the cost of
#      info logging against warn: the median, over the repetitions, of info's
#      requests/s against warn's in the same repetition (the two ran within a
#      few turns of each other), and the same for CPU per request.
#      "other CPU" is the CPU time used during the run by anything but this server
#      and wrk, as a share of all CPUs (/proc/stat): above a few percent, another
#      job shared the machine and the row is low and noisy. A run disturbed by more
#      than --max-other percent (default 5) is run again, up to --retries times
#      (default 2), and the last attempt is kept either way;
#   6. stops everything it started (trap), and removes its temp dir unless --keep.
#
# With two or more CPUs the servers are pinned to CPU 0 and wrk to CPU 1
# (taskset), so the server gets one core, as in the targets of issue 6.
# wrk uses --wrk-threads threads (default 1, never more than the connections),
# keep-alive HTTPS (it does not verify the certificate), and bench/post.lua to
# POST the fixture with Content-Type application/json. wrk is a closed-loop
# client: each connection sends its next request when the answer arrives.
# ray-webhook's log (stderr) goes to a file in the temp dir, as a container's
# stderr goes to a file through the runtime; its size is printed.
#
# Defaults: --duration 10 --connections "1 64" --repeat 1 --warmup 2
# --fixture worker (bench/fixtures/worker.json; --payloads DIR takes NAME.json
# from DIR instead) --log-levels "warn info" --threads 64 --wrk-threads 1
# --port 18443 (ceiling; ray-webhook uses the next ports, one per log level) --build-dir build-bench.
#
# --smoke (for CTest, so that a broken script fails instead of printing blanks): 1 s at 1
# connection, no warm-up, no drain delay, --no-build, installs nothing; exits 1 if a figure is missing or zero or a server erred.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

duration=10
connections="1 64"
repeat=1
warmup=2
fixture=worker
payloads=""
log_levels="warn info"
threads=64
wrk_threads=1
port=18443
build_dir=build-bench
max_other=5
retries=2
build=true
keep=false
smoke=false
smoke_serve=()
for a in "$@"; do
  if [ "$a" = --smoke ]; then
    smoke=true build=false duration=1 connections=1 warmup=0 threads=4 retries=0
    # Stop at once: the 5 s of draining after SIGTERM would be most of the run.
    smoke_serve=(--drain-delay 0)
    export BENCH_SMOKE=1
  fi
done
while [ $# -gt 0 ]; do
  case "$1" in
    --duration) duration="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --warmup) warmup="$2"; shift 2 ;;
    --fixture) fixture="$2"; shift 2 ;;
    --payloads) payloads="$2"; shift 2 ;;
    --log-levels) log_levels="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --wrk-threads) wrk_threads="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --max-other) max_other="$2"; shift 2 ;;
    --retries) retries="$2"; shift 2 ;;
    --no-build) build=false; shift ;;
    --keep) keep=true; shift ;;
    --smoke) shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "load.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
  esac
done

case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
body="${payloads:-bench/fixtures}/$fixture.json"
[ -s "$body" ] || { echo "load.sh: no such fixture: $body" >&2; exit 2; }
body="$(cd "$(dirname "$body")" && pwd)/$(basename "$body")"

# --- 1. packages ---------------------------------------------------------------
source bench/lib.sh
bench_install wrk libbenchmark-dev curl jq util-linux

# --- 2. temp dir, clean-up, build ------------------------------------------------
tmp="$(mktemp -d -t ray-webhook-load.XXXXXX)"
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do
    kill -TERM "$pid" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  if $keep; then echo "load.sh: kept $tmp" >&2; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

if $build; then
  bench_build "$build_dir" "$tmp/build.log" || { keep=true; exit 1; }
fi
webhook_bin="$build_dir/ray-webhook"
ceiling_bin="$build_dir/ceiling_server"
for b in "$webhook_bin" "$ceiling_bin"; do
  [ -x "$b" ] || { echo "load.sh: $b is missing (run without --no-build)" >&2; exit 1; }
done

# --- 3. certificate, answer body ---------------------------------------------------
bash certs/generate.sh --out "$tmp/certs" >/dev/null 2>&1
answer="$("$webhook_bin" review --mutate "$body")"
printf '%s' "$answer" >"$tmp/answer.json"

if [ "$(nproc)" -ge 2 ]; then
  server_pin=(taskset -c 0)
  wrk_pin=(taskset -c 1)
  pinning="server on CPU 0, wrk on CPU 1"
else
  server_pin=()
  wrk_pin=()
  pinning="not pinned (one CPU)"
fi

# --- 4. runs -----------------------------------------------------------------------
results="$tmp/results.tsv"  # server conns rps p50_us p99_us errors vmhwm_kb other_cpu_percent cpu_us
clk_tck="$(getconf CLK_TCK)"
: >"$results"

# start_server NAME PORT LOGFILE CMD...: starts it pinned, waits until it answers,
# and records it in names/ports/server_pids.
names=()
ports=()
server_pids=()
start_server() {
  local name="$1" p="$2" log="$3" pid
  shift 3
  "${server_pin[@]}" "$@" >"$log" 2>&1 &
  pid=$!
  pids+=("$pid")
  local i
  for i in $(seq 100); do
    if ! kill -0 "$pid" 2>/dev/null; then
      echo "load.sh: $name exited at start:" >&2
      tail -5 "$log" >&2
      exit 1
    fi
    if curl -sk -o /dev/null -X POST -H 'Content-Type: application/json' --data-binary @"$body" \
      "https://127.0.0.1:$p/mutate"; then
      names+=("$name")
      ports+=("$p")
      server_pids+=("$pid")
      return 0
    fi
    sleep 0.1
  done
  echo "load.sh: $name did not answer on port $p" >&2
  exit 1
}

# check_answer NAME PORT: one request with curl; it must be a 200 AdmissionReview
# whose uid is the fixture's.
check_answer() {
  local name="$1" p="$2" code uid
  code="$(curl -sk -o "$tmp/check.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data-binary @"$body" "https://127.0.0.1:$p/mutate")"
  uid="$(jq -r '.request.uid' "$body")"
  if [ "$code" != 200 ] || [ "$(jq -r '.response.uid' "$tmp/check.json" 2>/dev/null)" != "$uid" ]; then
    echo "load.sh: $name answered $code with an unexpected body:" >&2
    head -c 300 "$tmp/check.json" >&2
    exit 1
  fi
}

# drive NAME PORT CONNS SECONDS: one wrk run; echoes its RESULT line plus
# wrk_cpu=SECONDS, the CPU time wrk itself used.
drive() {
  local name="$1" p="$2" c="$3" s="$4" t="$wrk_threads"
  local out="$tmp/wrk-${name//\//-}-$c.out"
  [ "$t" -gt "$c" ] && t="$c"
  local TIMEFORMAT='%U %S'
  { time "${wrk_pin[@]}" wrk -t"$t" -c"$c" -d"${s}s" -s bench/post.lua "https://127.0.0.1:$p/mutate" -- "$body" \
      >"$out" 2>&1; } 2>"$out.time" || { cat "$out" >&2; exit 1; }
  grep -q '^RESULT' "$out" || { cat "$out" >&2; exit 1; }
  echo "$(grep '^RESULT' "$out") wrk_cpu=$(awk '{print $1 + $2}' "$out.time")"
}

# CPU jiffies: all CPUs busy and total (from /proc/stat), and one process's (utime + stime).
cpu_busy_total() { awk 'NR == 1 {t = 0; for (i = 2; i <= 9; i++) t += $i; print t - $5 - $6, t}' /proc/stat; }
proc_jiffies() { awk '{print $14 + $15}' "/proc/$1/stat"; }

vmhwm_kb() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status"; }

# measure INDEX CONNS RUN: one wrk run against server INDEX, run again while
# another job disturbed it; appends the row to $results.
measure() {
  local i="$1" c="$2" r="$3" name="${names[$1]}" p="${ports[$1]}" pid="${server_pids[$1]}"
  local line errors attempt=0 busy0 total0 busy1 total1 own0 own1 other
  while :; do
    read -r busy0 total0 < <(cpu_busy_total)
    own0="$(proc_jiffies "$pid")"
    line="$(drive "$name" "$p" "$c" "$duration")"
    read -r busy1 total1 < <(cpu_busy_total)
    own1="$(proc_jiffies "$pid")"
    # CPU used by anything but this server and wrk, as a share of all CPUs during the run.
    other="$(awk -v b=$((busy1 - busy0)) -v t=$((total1 - total0)) -v s=$((own1 - own0)) \
      -v w="$(bench_result_field wrk_cpu "$line")" -v hz="$clk_tck" \
      'BEGIN {o = b - s - w * hz; if (o < 0) o = 0; printf "%.1f", t ? 100 * o / t : 0}')"
    if awk -v o="$other" -v m="$max_other" 'BEGIN {exit !(o <= m)}' || [ "$attempt" -ge "$retries" ]; then
      break
    fi
    attempt=$((attempt + 1))
    echo "load.sh: $name c=$c run $r: other CPU $other% > $max_other%, disturbed; again ($attempt of $retries)" >&2
  done
  errors=$(( $(bench_result_field connect "$line") + $(bench_result_field read "$line") + $(bench_result_field write "$line") +
             $(bench_result_field status "$line") + $(bench_result_field timeout "$line") ))
  # The server's CPU time per request: at one connection it is busy only part of
  # the time, so this is what a request costs it, whatever the round trip adds.
  cpu_us="$(awk -v s=$((own1 - own0)) -v n="$(bench_result_field requests "$line")" -v hz="$clk_tck" \
    'BEGIN {printf "%.1f", n ? s / hz * 1e6 / n : 0}')"
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$c" "$(bench_result_field rps "$line")" "$(bench_result_field p50_us "$line")" \
    "$(bench_result_field p99_us "$line")" "$errors" "$(vmhwm_kb "$pid")" "$other" "$cpu_us" "$r" >>"$results"
  echo "load.sh: $name c=$c run $r: $(cut -d' ' -f2- <<<"$line") other_cpu=$other% cpu_us=$cpu_us" >&2
}

# Idle share of all CPUs over one second, before anything of ours runs: other work
# on the machine lowers every figure.
idle_percent() {
  local a b
  a=($(head -1 /proc/stat)); sleep 1; b=($(head -1 /proc/stat))
  local i total=0 idle=$(( (b[4] + b[5]) - (a[4] + a[5]) ))
  for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
  echo $(( total > 0 ? 100 * idle / total : 0 ))
}
idle_before="$(idle_percent)"
echo "load.sh: $(basename "$body") ($(wc -c <"$body") bytes) to /mutate, ${duration}s per run," \
  "connections $connections, repeat $repeat, $pinning, $threads server threads; CPUs ${idle_before}% idle before" >&2
if [ "$idle_before" -lt 90 ]; then
  echo "load.sh: warning: the machine is busy (${idle_before}% idle); figures will be low and noisy" >&2
fi

# Every server runs at once, all pinned to the same CPU, and they take turns:
# each repetition drives each server once, so a slow spell of the machine falls
# on all of them alike, and starts one server later than the one before, so
# none always runs after the others (after 20 s of load, say). A server waiting
# for its turn is idle.
start_server ceiling "$port" "$tmp/ceiling.log" \
  "$ceiling_bin" --bind 127.0.0.1 --port "$port" --tls-cert "$tmp/certs/tls.crt" --tls-key "$tmp/certs/tls.key" \
  --threads "$threads" --body "$tmp/answer.json"
level_port=$((port + 1))
for level in $log_levels; do
  start_server "ray-webhook/$level" "$level_port" "$tmp/webhook-$level.log" \
    "$webhook_bin" serve --bind 127.0.0.1 --port "$level_port" --probe-port 0 --tls-cert "$tmp/certs/tls.crt" \
    --tls-key "$tmp/certs/tls.key" --threads "$threads" --log-level "$level" "${smoke_serve[@]}"
  level_port=$((level_port + 1))
done
max_c=0
for c in $connections; do [ "$c" -gt "$max_c" ] && max_c="$c"; done
for i in "${!names[@]}"; do
  check_answer "${names[$i]}" "${ports[$i]}"
  [ "$warmup" != 0 ] && drive "${names[$i]}" "${ports[$i]}" "$max_c" "$warmup" >/dev/null
done
for c in $connections; do
  for r in $(seq "$repeat"); do
    for k in "${!names[@]}"; do measure $(( (k + r - 1) % ${#names[@]} )) "$c" "$r"; done
  done
done
for level in $log_levels; do
  echo "load.sh: ray-webhook --log-level $level wrote $(wc -l <"$tmp/webhook-$level.log") log lines," \
    "$(wc -c <"$tmp/webhook-$level.log") bytes" >&2
done
idle_after="$(idle_percent)"

# --- 5. table ----------------------------------------------------------------------
echo
echo "$(basename "$body") ($(wc -c <"$body") bytes), POST /mutate, ${duration}s x $repeat per row$( [ "$repeat" -gt 1 ] && echo ", medians"), $pinning, $(nproc) CPUs, $threads server threads, $(bench_core_build "$build_dir")"
echo "CPUs idle before the runs: ${idle_before}%, after: ${idle_after}%$( [ "$idle_before" -lt 90 ] || [ "$idle_after" -lt 90 ] && echo " (below 90%: something else was running)")"
awk -F'\t' -v conn_order="$connections" '
  # Portable (mawk has no asort): insertion sort, then the middle.
  function signed_list(list,   a, n, i, out) {
    n = split(list, a, " ")
    for (i = 1; i <= n; i++) out = out sprintf(" %+.1f", a[i])
    return out
  }
  function median(list,   a, n, i, j, v) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++) {
      v = a[i] + 0
      for (j = i - 1; j >= 1 && a[j] + 0 > v; j--) a[j + 1] = a[j]
      a[j + 1] = v
    }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  {
    key = $1 "\t" $2
    if (!(key in seen)) { seen[key] = 1; order[++rows] = key }
    rps[key] = rps[key] " " $3; p50[key] = p50[key] " " $4; p99[key] = p99[key] " " $5
    err[key] += $6; hwm[key] = $7; oth[key] = oth[key] " " $8; cpu[key] = cpu[key] " " $9
    run_rps[$1 "\t" $2 "\t" $10] = $3; run_cpu[$1 "\t" $2 "\t" $10] = $9; if ($10 > runs) runs = $10
  }
  END {
    printf "%-20s %5s %12s %9s %9s %7s %11s %10s %11s\n", "server", "conns", "requests/s", "p50 ms", "p99 ms", "errors",
      "CPU us/req", "VmHWM MB", "other CPU"
    for (i = 1; i <= rows; i++) {
      k = order[i]; split(k, kk, "\t")
      m = median(rps[k]); med_rps[k] = m; med_cpu[k] = median(cpu[k])
      printf "%-20s %5d %12.0f %9.3f %9.3f %7d %11.1f %10.1f %10.1f%%\n", kk[1], kk[2], m, median(p50[k]) / 1000,
        median(p99[k]) / 1000, err[k], med_cpu[k], hwm[k] / 1024, median(oth[k])
    }
    print ""
    nc = split(conn_order, cs, " ")
    for (ci = 1; ci <= nc; ci++) {
      c = cs[ci]
      base = med_rps["ceiling\t" c]
      for (i = 1; i <= rows; i++) {
        k = order[i]; split(k, kk, "\t")
        if (kk[2] != c || kk[1] == "ceiling" || base == 0) continue
        cbase = med_cpu["ceiling\t" c]
        printf "%s at %d connections: %.0f%% of the ceiling in requests/s", kk[1], c, 100 * med_rps[k] / base
        # The same share by cost: the ceiling pays this share of what a request costs ray-webhook.
        if (cbase > 0 && med_cpu[k] > 0) printf ", %.0f%% in CPU per request", 100 * cbase / med_cpu[k]
        printf "\n"
      }
      # Paired: info against warn in the same repetition, a few turns apart.
      ratios = ""; cpu_ratios = ""
      for (r = 1; r <= runs; r++) {
        warn = run_rps["ray-webhook/warn\t" c "\t" r]; info = run_rps["ray-webhook/info\t" c "\t" r]
        if (warn > 0 && info > 0) ratios = ratios " " 100 * (info - warn) / warn
        wc = run_cpu["ray-webhook/warn\t" c "\t" r]; ic = run_cpu["ray-webhook/info\t" c "\t" r]
        if (wc > 0 && ic > 0) cpu_ratios = cpu_ratios " " 100 * (ic - wc) / wc
      }
      if (ratios != "") {
        printf "info logging at %d connections: %+.1f%% requests/s against warn", c, median(ratios)
        if (cpu_ratios != "") printf ", %+.1f%% CPU per request", median(cpu_ratios)
        printf " (median of %d paired runs:%s)\n", split(ratios, tmp_r, " "), signed_list(ratios)
      }
    }
  }' "$results" >"$tmp/table.txt"
cat "$tmp/table.txt"

# --- smoke checks ---------------------------------------------------------------------
if $smoke; then
  n_levels=$(wc -w <<<"$log_levels")
  n_conns=$(wc -w <<<"$connections")
  [ "$(wc -l <"$results")" -eq $(( (n_levels + 1) * n_conns * repeat )) ] ||
    bench_smoke_fail "$(wc -l <"$results") runs recorded, want $(( (n_levels + 1) * n_conns * repeat ))"
  rows=0
  while read -r name c rps p50 p99 errors cpu hwm other; do
    rows=$((rows + 1))
    bench_smoke_check "$name c=$c requests/s" "$rps"
    bench_smoke_check "$name c=$c p50" "$p50"
    bench_smoke_check "$name c=$c p99" "$p99"
    bench_smoke_check "$name c=$c errors (incl. non-2xx)" "$errors" zero
    bench_smoke_check "$name c=$c CPU per request" "$cpu"
    bench_smoke_check "$name c=$c VmHWM" "$hwm"
    bench_smoke_check "$name c=$c other CPU" "${other%\%}" number
  done < <(awk 'NR > 1 && NF == 9' "$tmp/table.txt")
  [ "$rows" -eq $(( (n_levels + 1) * n_conns )) ] || bench_smoke_fail "$rows table rows, want $(( (n_levels + 1) * n_conns ))"
  shares="$(grep -c ' of the ceiling in requests/s, [0-9]*% in CPU per request$' "$tmp/table.txt" || true)"
  [ "$shares" -eq $(( n_levels * n_conns )) ] || bench_smoke_fail "$shares lines of shares of the ceiling, want $(( n_levels * n_conns ))"
  if grep -qw warn <<<"$log_levels" && grep -qw info <<<"$log_levels"; then
    paired="$(grep -Ec '^info logging at [0-9]+ connections: [-+][0-9.]+% requests/s against warn, [-+][0-9.]+% CPU per request' "$tmp/table.txt" || true)"
    [ "$paired" -eq "$n_conns" ] || bench_smoke_fail "$paired lines of info against warn, want $n_conns"
  fi
  bench_smoke_done load.sh
fi
