#!/usr/bin/env bash
# The cluster audit at scale: what ray-webhook's audit costs the server and
# kube-apiserver, and how long a change takes to show up in its findings.
#
#   bench/audit-scale.sh [--ray-webhook FILE] [--nodes N] [--clusters N] [--workers N] [--namespaces N]
#                        [--clients N] [--qps Q] [--phases a,b,c] [--window D] [--periodic-args ARGS]
#                        [--watch-args ARGS] [--probes N] [--probe-spread D] [--probe-hold D] [--step-timeout D]
#                        [--no-finished-job] [--admission-pods N] [--admission-rate R] [--results DIR]
#                        [--stop-controllers] [--pause-kwok] [--settle D] [--watchers N] [--no-build]
#
# On the end-to-end control plane (tests/e2e/cmd/e2e-cluster up: etcd,
# kube-apiserver, kube-scheduler, kube-controller-manager, KWOK, CoreDNS and
# ray-webhook installed from deploy/ and reached through its Service; no
# KubeRay operator, which would replace the Pods) with KubeRay v1.6.2's CRDs,
# tests/e2e/cmd/auditscale populate creates --nodes KWOK Nodes (default
# 1,000), --clusters RayClusters (default 10,000, over --namespaces
# namespaces, default 100) and for each a head and --workers workers (default
# 9: 100,000 Pods), bound to the Nodes, as KubeRay 1.x builds them
# (bench/fixtures' head and worker), from --clients clients (default 32) at up
# to --qps requests a second (default 5000), with the webhook configurations
# deleted meanwhile. KWOK manages every Node (leases, status) and marks their
# Pods Running, as kubelets would; its CPU is reported on its own. The
# creation time, and then (once every Pod is Running and KWOK's CPU has
# stopped falling) the RSS of etcd,
# kube-apiserver and KWOK, are printed and kept. --stop-controllers stops
# kube-controller-manager and kube-scheduler once the objects are created
# (every Pod is bound already, and the probes' Pods are never scheduled): at
# 100,000 Pods their informer caches hold some 6 GiB, which with
# kube-apiserver's 12 does not fit in 24 GiB. Namespaces then are not
# emptied by their controller: the script deletes its admission Pods itself.
# --pause-kwok (with --stop-controllers: no node controller sees the Nodes'
# leases expire) stops KWOK (SIGSTOP) for each phase's steady-state window,
# so that kube-apiserver's CPU in it is the audit's and the idle watchers',
# not KWOK's heartbeats, which move by more than the audit costs. With
# --probes 0 and --admission-pods 0 nothing between the windows needs KWOK,
# so it stays stopped from the first window to the end: no window starts
# while kube-apiserver is still catching up with KWOK's resumed heartbeats.
#
# Then, on the same cluster, one phase after another (--phases, default a,b,c;
# a phase named again runs again, as a2, c2 and so on, and the figures "over
# a" of a phase are against the mean of the a windows just before and after it):
#   a  ray-webhook serving as deploy/ runs it, no audit
#   b  the same with --periodic-args (default --audit-interval=5m
#      --audit-mode=list): a paged
#      list of every Ray Pod and ray.io object every 5 minutes
#   c  the same with --watch-args (default --audit-interval=5m --audit-mode=watch):
#      one list, then watches. --watchers N (default 1) runs N such servers at
#      once, the others on ports of their own with no reports, each started once
#      the one before has finished its first audit: one watched audit's steady
#      cost to kube-apiserver is under its idle movement, N of them stand above it
#      (the table then also shows kube-apiserver's CPU over a per watched audit)
# Phases b and c also get --audit-reports=openreports.io/v1alpha1 (the
# framework installs the Reports' CRD) and --audit-finished-job-grace=0s, and
# the server reads the cluster with a token of deploy/'s ServiceAccount granted
# get, list and watch on Pods, Deployments and the ray.io kinds, and the
# Reports (deploy/overlays/audit's grant, plus watch). A phase:
#   1. waits for its first audit to finish (ray_webhook_audit_last_success_timestamp_seconds);
#   2. after --settle (default 0s) more, --window of steady state (default 10m): the server's RSS (VmRSS sampled
#      every 5 s, its median, and VmHWM at the end), the CPU seconds per hour of
#      kube-apiserver, etcd, KWOK and the server (/proc/PID/stat), and the bytes
#      per hour kube-apiserver sent for LISTs and watch events of Pods,
#      Deployments and the ray.io kinds (apiserver_response_sizes_sum,
#      apiserver_watch_events_sizes_sum: every client's, so read against a);
#      and of kube-apiserver's CPU, the part its Go runtime spent collecting
#      garbage (go_cpu_classes_gc_total_cpu_seconds_total) and the bytes it
#      allocated (go_gc_heap_allocs_bytes_total). Its idle collections of a
#      heap of some 5 GiB come every two minutes or so, seconds of CPU each,
#      and whether a window holds one more of them moves its CPU by more than
#      a watch costs; the rest of its CPU is steadier. Also counted: its
#      consistency checks of the Pods' watch cache (feature DetectCacheInconsistency,
#      on by default: every 5 to 7.5 minutes it lists every Pod from the cache and
#      from etcd, some 4.7 GiB allocated and 10 CPU-seconds at 100,000 Pods), which
#      a window holds one or two of;
#   3. (b, c) --probes changes (default 20; 0: none) starting evenly over --probe-spread
#      (default the window), each in a RayCluster of its own: an extra head Pod,
#      timed until ray_webhook_rayclusters_with_extra_heads and
#      ray_webhook_audit_findings{rule="extra-head"} count it and until the
#      namespace's Report holds it, then, after a random wait up to
#      --probe-hold (default 5m, the audit interval: deleted at any point of the
#      audit's cycle), deleted and timed until they no longer do; and at the same time as many RayJobs whose status says they finished,
#      each naming a RayCluster (rule finished-job-cluster; --no-finished-job
#      leaves them out).
#      p50 and p99 of each; a signal not seen within --step-timeout (default
#      12m) counts as missing;
#   4. --admission-pods Ray worker Pods (default 2,000; 0: no admission step) created through the
#      webhook (tests/e2e/cmd/podload into a new namespace, --admission-rate a
#      second, default 100) while the audit runs: the p50 and p99 of
#      kube-apiserver's apiserver_admission_webhook_admission_duration_seconds
#      (its buckets start at 5 ms, 25 ms, 100 ms: quantiles are interpolated
#      inside them) and of the server's own controller_runtime_webhook_latency_seconds
#      (from 0.1 ms), and their ratio to phase a's.
# It prints one markdown table, the phases side by side, and writes every raw
# figure to --results DIR (default build-bench/audit-scale/DATE/): results.json,
# the tables, each program's JSON and the server logs.
#
# Durations are Go's (10m, 90s). At full scale, about two hours on two cores:
# the creation about 10 s per 1,000 Pods, and KWOK's catch-up after it (some
# 30 minutes together); phase a the window and the admission run; b and c
# each also their first audit, and the changes' spread plus twice the audit
# interval (some 35 minutes). Keep the machine otherwise quiet. A small run, to
# see the whole path work:
#   bench/audit-scale.sh --ray-webhook build/ray-webhook --nodes 20 --clusters 200 --namespaces 20 \
#     --phases a,b --window 2m --periodic-args "--audit-interval=30s --audit-mode=list" --probes 5 --probe-spread 1m \
#     --probe-hold 30s --step-timeout 3m --admission-pods 300
#
# Needs root (the e2e network namespace) and Go (tests/e2e/README.md). Builds
# the e2e binaries into tests/e2e/.bin (scripts/e2e.sh --build, and
# auditscale) unless --no-build; --ray-webhook defaults to build/ray-webhook.
# The cluster and its work directory go when the script ends.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

ray_webhook="$root/build/ray-webhook"
nodes=1000
clusters=10000
workers=9
namespaces=100
clients=32
qps=5000
phases=a,b,c
window=10m
periodic_args=""
watch_args="--audit-interval=5m --audit-mode=watch"
probes=20
probe_spread=""
probe_hold=5m
step_timeout=12m
finished_job=1
admission_pods=2000
admission_rate=100
results=""
build=1
stop_controllers=0
pause_kwok=0
settle=0s
watchers=1
while [ $# -gt 0 ]; do
  case "$1" in
    --ray-webhook) ray_webhook="$2"; shift 2 ;;
    --nodes) nodes="$2"; shift 2 ;;
    --clusters) clusters="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --namespaces) namespaces="$2"; shift 2 ;;
    --clients) clients="$2"; shift 2 ;;
    --qps) qps="$2"; shift 2 ;;
    --phases) phases="$2"; shift 2 ;;
    --window) window="$2"; shift 2 ;;
    --periodic-args) periodic_args="$2"; shift 2 ;;
    --watch-args) watch_args="$2"; shift 2 ;;
    --probes) probes="$2"; shift 2 ;;
    --probe-spread) probe_spread="$2"; shift 2 ;;
    --probe-hold) probe_hold="$2"; shift 2 ;;
    --step-timeout) step_timeout="$2"; shift 2 ;;
    --no-finished-job) finished_job=0; shift ;;
    --admission-pods) admission_pods="$2"; shift 2 ;;
    --admission-rate) admission_rate="$2"; shift 2 ;;
    --results) results="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --stop-controllers) stop_controllers=1; shift ;;
    --pause-kwok) pause_kwok=1; shift ;;
    --settle) settle="$2"; shift 2 ;;
    --watchers) watchers="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "audit-scale.sh: unknown flag $1 (try --help)" >&2; exit 2 ;;
  esac
done
for n in "$nodes" "$clusters" "$namespaces" "$clients" "$qps" "$admission_rate" "$watchers"; do
  [ "$n" -gt 0 ] 2>/dev/null || { echo "audit-scale.sh: a count flag takes a positive whole number, not $n" >&2; exit 2; }
done
for n in "$probes" "$admission_pods"; do
  [ "$n" -ge 0 ] 2>/dev/null || { echo "audit-scale.sh: --probes and --admission-pods take a whole number, not $n" >&2; exit 2; }
done
[ "$pause_kwok" = 0 ] || [ "$stop_controllers" = 1 ] ||
  { echo "audit-scale.sh: --pause-kwok needs --stop-controllers (the node controller would evict every Pod)" >&2; exit 2; }
for p in ${phases//,/ }; do
  case "$p" in a|b|c) ;; *) echo "audit-scale.sh: --phases takes a, b and c, not $p" >&2; exit 2 ;; esac
done
[ -n "$probe_spread" ] || probe_spread="$window"
case "$ray_webhook" in /*) ;; *) ray_webhook="$root/$ray_webhook" ;; esac
[ -x "$ray_webhook" ] || { echo "audit-scale.sh: $ray_webhook is not an executable" >&2; exit 1; }
# The periodic audit, as every server before --audit-mode ran it.
[ -n "$periodic_args" ] || periodic_args="--audit-interval=5m --audit-mode=list"
to_seconds() { # to_seconds 10m|90s|1h|1m30s: whole seconds
  local d="$1" total=0 n
  [[ "$d" =~ ^([0-9]+[hms])+$ ]] || { echo "audit-scale.sh: not a duration: $d" >&2; exit 2; }
  while [[ "$d" =~ ^([0-9]+)([hms])(.*)$ ]]; do
    n="${BASH_REMATCH[1]}"
    case "${BASH_REMATCH[2]}" in h) total=$((total + n * 3600)) ;; m) total=$((total + n * 60)) ;; s) total=$((total + n)) ;; esac
    d="${BASH_REMATCH[3]}"
  done
  echo "$total"
}
window_s="$(to_seconds "$window")"
window_settle_s="$(to_seconds "$settle")"
to_seconds "$probe_spread" >/dev/null
to_seconds "$probe_hold" >/dev/null
to_seconds "$step_timeout" >/dev/null

[ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
export PATH GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
bin="${E2E_BIN_DIR:-$root/tests/e2e/.bin}"
if [ "$build" = 1 ]; then
  E2E_BIN_DIR="$bin" bash scripts/e2e.sh --build >&2
  (cd tests/e2e && nice -n 10 go build -trimpath -o "$bin/auditscale" ./cmd/auditscale)
fi
for b in e2e-cluster auditscale podload kubectl; do
  [ -x "$bin/$b" ] || { echo "audit-scale.sh: $bin/$b is missing (run without --no-build)" >&2; exit 1; }
done
[ -n "$results" ] || results="$root/build-bench/audit-scale/$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$results"
results="$(cd "$results" && pwd)"

work="$(mktemp -d -t ray-webhook-audit-scale.XXXXXX)"
server_pid=""
kwok_pid=""
cleanup() {
  if [ -n "$kwok_pid" ]; then kill -CONT "$kwok_pid" 2>/dev/null || true; fi
  if [ -n "$server_pid" ]; then kill "$server_pid" 2>/dev/null || true; fi
  if [ -f "$work/e2e/processes" ]; then "$bin/e2e-cluster" down --work "$work/e2e" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { printf '%s audit-scale: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

log "starting the control plane ($work/e2e)"
"$bin/e2e-cluster" up --repo "$root" --work "$work/e2e" --bin "$bin" --ray-webhook "$ray_webhook" >"$work/up.log" 2>&1 ||
  { tail -20 "$work/up.log" >&2; exit 1; }
# shellcheck disable=SC1091
source "$work/e2e/bench.env"
export KUBECONFIG
kc() { "$KUBECTL" "$@"; }
cluster_domain="$(sed -n 's/^CLUSTER_DOMAIN=//p' "$work/e2e/cluster.env")"
pid_of() { awk -v n="$1" '$3 == n { print $1 }' "$work/e2e/processes"; }
apiserver_pid="$(pid_of kube-apiserver)"
etcd_pid="$(pid_of etcd)"
kwok_pid="$(pid_of kwok)"
[ -n "$apiserver_pid" ] && [ -n "$etcd_pid" ] && [ -n "$kwok_pid" ] ||
  { echo "audit-scale.sh: no kube-apiserver, etcd or kwok in $work/e2e/processes" >&2; exit 1; }
# The Ray stand-in answers for Ray in the suite's Pods; nothing here dials a
# head, and its unpaginated list of every Running Ray Pod (again after each
# watch ends) costs kube-apiserver gigabytes at 100,000 Pods: stopped.
standin_pid="$(pid_of ray-standin)"
[ -z "$standin_pid" ] || kill "$standin_pid"
clock_ticks="$(getconf CLK_TCK)"
cpu_ticks() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"; } # utime + stime (fields 14, 15)
others_ticks() { # phase c's other watched audits (--watchers), together
  local q total=0
  for q in "${other_pids[@]}"; do total=$((total + $(cpu_ticks "$q"))); done
  echo "$total"
}
rss_kib() { awk -v k="${2:-VmRSS}:" '$1 == k { print $2 }' "/proc/$1/status"; }

# The shipped replica's command line, started again for every phase with that phase's flags.
mapfile -d '' server_argv <"/proc/$RAY_WEBHOOK_PID/cmdline"
kill "$RAY_WEBHOOK_PID"
while kill -0 "$RAY_WEBHOOK_PID" 2>/dev/null; do sleep 0.1; done

# KubeRay's CRDs (no operator).
release=kuberay-v1.6.2
crds="$(cd "$E2E_DIR/$release" && go list -m -f '{{.Dir}}' github.com/ray-project/kuberay/ray-operator)/config/crd/bases"
kc apply --server-side --force-conflicts -f "$crds" >/dev/null
kc wait --for condition=established --timeout=60s -f "$crds" >/dev/null

# The audit's grant, for deploy/'s ServiceAccount, and a token of it that outlasts the run.
kc apply -f - >/dev/null <<'EOF'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: ray-webhook-audit-scale}
rules:
- {apiGroups: [""], resources: [pods], verbs: [get, list, watch]}
- {apiGroups: [apps], resources: [deployments], verbs: [get, list, watch]}
- {apiGroups: [ray.io], resources: [rayclusters, rayjobs, rayservices, raycronjobs], verbs: [get, list, watch]}
- {apiGroups: [openreports.io], resources: [reports], verbs: [get, list, watch, create, patch, update, delete]}
- {apiGroups: [wgpolicyk8s.io], resources: [policyreports], verbs: [get, list, watch, create, patch, update, delete]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: ray-webhook-audit-scale}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: ray-webhook-audit-scale}
subjects: [{kind: ServiceAccount, name: ray-webhook, namespace: ray-webhook-system}]
EOF
kc -n ray-webhook-system create token ray-webhook --duration=48h >"$work/token"
chmod 600 "$work/token"

# The webhook configurations, away while the objects are created.
for k in mutatingwebhookconfiguration validatingwebhookconfiguration; do
  kc get "$k" ray-webhook -o json | jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp,
    .metadata.generation, .metadata.managedFields)' >"$work/$k.json"
  kc delete "$k" ray-webhook >/dev/null
done

pods_total=$((clusters * (workers + 1)))
log "creating $nodes Nodes, $clusters RayClusters and $pods_total Pods ($clients clients)"
cpu0=("$(cpu_ticks "$apiserver_pid")" "$(cpu_ticks "$etcd_pid")" "$(cpu_ticks "$kwok_pid")")
t0=$SECONDS
"$bin/auditscale" populate -kubeconfig "$KUBECONFIG" -ray-webhook "$ray_webhook" -fixtures "$root/bench/fixtures" \
  -layout "$results/layout.json" -nodes "$nodes" -clusters "$clusters" -workers "$workers" -namespaces "$namespaces" \
  -c "$clients" -qps "$qps" -taint "$KWOK_TAINT" -cluster-domain "${cluster_domain:-cluster.local}" >"$results/populate.json"
create_s=$((SECONDS - t0))
log "created in $create_s s; waiting for KWOK to catch up"
if [ "$stop_controllers" = 1 ]; then
  for c in kube-controller-manager kube-scheduler; do
    c_pid="$(pid_of "$c")"
    [ -z "$c_pid" ] || { kill "$c_pid"; log "stopped $c"; }
  done
fi
# all_running: true when no Pod is other than Running, from a one-item page:
# no client or server holds the whole list.
all_running() {
  kc get --raw "/api/v1/pods?fieldSelector=status.phase%21%3DRunning&limit=1" | jq '.items | length == 0'
}
# Caught up: every Pod Running and KWOK's CPU no longer falling (within 10 %
# of the last 30 s: its steady heartbeat of 1,000 Nodes is far from idle).
previous=""
while :; do
  k0="$(cpu_ticks "$kwok_pid")"; sleep 30; k1="$(cpu_ticks "$kwok_pid")"
  busy=$(((k1 - k0) * 1000 / clock_ticks / 30)) # thousandths of a CPU
  if [ "$(all_running)" = true ] && [ -n "$previous" ] && [ "$busy" -ge $((previous * 9 / 10)) ]; then break; fi
  previous="$busy"
  [ $((SECONDS - t0)) -lt 7200 ] || { log "KWOK still busy after 2 hours; going on"; break; }
done
settle_s=$((SECONDS - t0))
cpu1=("$(cpu_ticks "$apiserver_pid")" "$(cpu_ticks "$etcd_pid")" "$(cpu_ticks "$kwok_pid")")
all_running="$(all_running)"
jq -n --argjson populate "$(cat "$results/populate.json")" --argjson create "$create_s" --argjson settle "$settle_s" \
  --argjson all_running "${all_running:-false}" --argjson hz "$clock_ticks" \
  --argjson a "$(((cpu1[0] - cpu0[0])))" --argjson e "$(((cpu1[1] - cpu0[1])))" --argjson k "$(((cpu1[2] - cpu0[2])))" \
  --argjson arss "$(rss_kib "$apiserver_pid")" --argjson erss "$(rss_kib "$etcd_pid")" --argjson krss "$(rss_kib "$kwok_pid")" \
  --argjson ahwm "$(rss_kib "$apiserver_pid" VmHWM)" --argjson ehwm "$(rss_kib "$etcd_pid" VmHWM)" \
  --arg etcd_data "$(du -sk "$work/e2e/etcd" 2>/dev/null | cut -f1)" \
  '{populate: $populate, create_seconds: $create, settled_seconds: $settle, all_pods_running: $all_running,
    cpu_seconds: {"kube-apiserver": ($a / $hz), etcd: ($e / $hz), kwok: ($k / $hz)},
    rss_mib: {"kube-apiserver": ($arss / 1024), etcd: ($erss / 1024), kwok: ($krss / 1024)},
    peak_rss_mib: {"kube-apiserver": ($ahwm / 1024), etcd: ($ehwm / 1024)},
    etcd_data_mib: (if $etcd_data == "" then null else ($etcd_data | tonumber / 1024) end)}' >"$results/scale.json"
log "caught up after $settle_s s (every Pod Running: $all_running); $(jq -c '{rss_mib, cpu_seconds}' "$results/scale.json")"

for k in mutatingwebhookconfiguration validatingwebhookconfiguration; do kc create -f "$work/$k.json" >/dev/null; done

webhook_curl() { # webhook_curl PATH [CURL_ARG...]: the server behind the Service's name and address
  local path="$1"
  shift
  curl -fsS --cacert "$WEBHOOK_CERT_DIR/ca.crt" --resolve "ray-webhook.ray-webhook-system.svc:$WEBHOOK_PORT:$WEBHOOK_IP" \
    "$@" "https://ray-webhook.ray-webhook-system.svc:$WEBHOOK_PORT$path"
}
metrics_url="https://$WEBHOOK_IP:$WEBHOOK_PORT/metrics"
launch_server() { # launch_server LOG ARG...: the shipped command line, then ARGs (a later flag wins), in the background
  local log_file="$1"
  shift
  CLUSTER_DOMAIN="$cluster_domain" "${server_argv[@]}" --kube-token-file="$work/token" "$@" >>"$log_file" 2>&1 &
}
start_server() { # start_server PHASE ARG...: launch_server, then wait until it answers a review
  local phase="$1" i
  shift
  launch_server "$results/ray-webhook-$phase.log" "$@"
  server_pid=$!
  for ((i = 0; i < 300; i++)); do
    kill -0 "$server_pid" 2>/dev/null || { tail -5 "$results/ray-webhook-$phase.log" >&2; server_pid=""; return 1; }
    webhook_curl /mutate -o /dev/null -H 'Content-Type: application/json' --data-binary @bench/fixtures/worker.json \
      2>/dev/null && return 0
    sleep 0.2
  done
  echo "audit-scale.sh: no answer on $WEBHOOK_IP:$WEBHOOK_PORT" >&2
  return 1
}
other_pids=() # phase c's other watched audits (--watchers)
stop_server() {
  local q
  for q in "${other_pids[@]}"; do kill "$q" 2>/dev/null || true; done
  for q in "${other_pids[@]}"; do while kill -0 "$q" 2>/dev/null; do sleep 0.1; done; done
  other_pids=()
  [ -n "$server_pid" ] || return 0
  kill "$server_pid" 2>/dev/null || true
  while kill -0 "$server_pid" 2>/dev/null; do sleep 0.1; done
  server_pid=""
}
# KWOK stopped for the windows only, or (nothing between them needing it) from the first window to the end.
kwok_held=0
[ "$pause_kwok" = 0 ] || [ "$probes" != 0 ] || [ "$admission_pods" != 0 ] || kwok_held=1
counter_delta() { # counter_delta BEFORE AFTER SERIES SCALE: (after - before) * SCALE of one series (name{labels} as /metrics prints it), rounded
  awk -v s="$3" -v k="$4" 'FNR == 1 { f++ } $1 == s { v[f] = $2 } END { printf "%.0f", (v[2] - v[1]) * k }' "$1" "$2"
}
server_gauge() { # server_gauge SERIES [URL]: its value on the server's /metrics, empty when it has none
  "$bin/auditscale" gauge -metrics "${2:-$metrics_url}" -ca "$WEBHOOK_CERT_DIR/ca.crt" \
    -server-name ray-webhook.ray-webhook-system.svc "$1" 2>/dev/null | jq -r --arg s "$1" '.[$s] // empty'
}
wait_first_audit() { # wait_first_audit PID URL WHAT: until the server at URL has finished an audit (at most an hour)
  local pid="$1" url="$2" what="$3" t0=$SECONDS last
  while :; do
    last="$(server_gauge ray_webhook_audit_last_success_timestamp_seconds "$url")"
    if [ -n "$last" ] && [ "${last%.*}" -gt 0 ] 2>/dev/null; then return 0; fi
    kill -0 "$pid" 2>/dev/null || { echo "audit-scale.sh: $what exited" >&2; return 1; }
    [ $((SECONDS - t0)) -lt 3600 ] || { echo "audit-scale.sh: $what: no audit finished in an hour" >&2; return 1; }
    sleep 1
  done
}

run_phase() { # run_phase PHASE ID ORDER: every measurement of one phase into $results/phase-ID.json (ID: a, a2, ...)
  local p="$1" id="$2" order="$3" args=() audit=0
  case "$p" in
    b) read -r -a args <<<"$periodic_args"; audit=1 ;;
    c) read -r -a args <<<"$watch_args"; audit=1 ;;
  esac
  [ "$audit" = 0 ] || args+=(--audit-reports=openreports.io/v1alpha1 --audit-finished-job-grace=0s)
  log "phase $id: ray-webhook ${args[*]:-(no audit)}"
  local t_start=$SECONDS first_audit=null
  start_server "$id" "${args[@]}" || { echo "audit-scale.sh: phase $id: the server did not start" >&2; return 1; }
  if [ "$audit" = 1 ]; then
    wait_first_audit "$server_pid" "$metrics_url" "phase $id: the server" || return 1
    first_audit=$((SECONDS - t_start))
    log "phase $id: the first audit finished $first_audit s after the start"
  fi
  if [ "$p" = c ] && [ "$watchers" -gt 1 ]; then
    local i port t_other
    for ((i = 1; i < watchers; i++)); do
      port=$((WEBHOOK_PORT + 1000 + i))
      launch_server "$results/ray-webhook-$id-$i.log" "${args[@]}" \
        --audit-reports=off --port "$port" --probe-port $((WEBHOOK_PORT + 2000 + i))
      other_pids+=($!)
      t_other=$SECONDS
      wait_first_audit "${other_pids[-1]}" "https://$WEBHOOK_IP:$port/metrics" "phase $id: watched audit $((i + 1))" || return 1
      log "phase $id: watched audit $((i + 1)) of $watchers: its first audit finished $((SECONDS - t_other)) s after its start"
    done
  fi

  # Steady state.
  if [ "$window_settle_s" -gt 0 ]; then
    log "phase $id: $settle to settle"
    sleep "$window_settle_s"
  fi
  log "phase $id: $window of steady state"
  kc get --raw /metrics >"$work/api-before"
  local c0=("$(cpu_ticks "$apiserver_pid")" "$(cpu_ticks "$etcd_pid")" "$(cpu_ticks "$kwok_pid")" "$(cpu_ticks "$server_pid")"
    "$(others_ticks)")
  local w0=$SECONDS
  : >"$work/rss-$id"
  [ "$pause_kwok" = 0 ] || kill -STOP "$kwok_pid"
  while [ $((SECONDS - w0)) -lt "$window_s" ]; do
    rss_kib "$server_pid" >>"$work/rss-$id"
    sleep 5
  done
  [ "$pause_kwok" = 0 ] || [ "$kwok_held" = 1 ] || kill -CONT "$kwok_pid"
  local c1=("$(cpu_ticks "$apiserver_pid")" "$(cpu_ticks "$etcd_pid")" "$(cpu_ticks "$kwok_pid")" "$(cpu_ticks "$server_pid")"
    "$(others_ticks)")
  local secs=$((SECONDS - w0)) audits_at_once=0
  [ "$audit" = 0 ] || audits_at_once=$((1 + ${#other_pids[@]}))
  kc get --raw /metrics >"$work/api-after"
  "$bin/auditscale" sizes "$work/api-before" "$work/api-after" >"$results/sizes-$id.json"
  local gc_ms alloc_bytes pod_checks
  gc_ms="$(counter_delta "$work/api-before" "$work/api-after" go_cpu_classes_gc_total_cpu_seconds_total 1000)"
  alloc_bytes="$(counter_delta "$work/api-before" "$work/api-after" go_gc_heap_allocs_bytes_total 1)"
  pod_checks="$(counter_delta "$work/api-before" "$work/api-after" \
    'apiserver_storage_consistency_checks_total{group="",resource="pods",status="success"}' 1)"
  local hwm rss
  hwm="$(rss_kib "$server_pid" VmHWM)"
  rss="$(sort -n "$work/rss-$id" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')"

  # From a change to its finding.
  local probe_files=()
  if [ "$audit" = 1 ] && [ "$probes" -gt 0 ]; then
    local kinds=(extra-head)
    [ "$finished_job" = 0 ] || kinds+=(finished-job)
    # Both kinds at once (other rules, other objects): each waits up to two audit intervals.
    local kind probe_pids=()
    log "phase $id: $probes changes of each of ${kinds[*]} over $probe_spread"
    for kind in "${kinds[@]}"; do
      "$bin/auditscale" probe -kubeconfig "$KUBECONFIG" -layout "$results/layout.json" -metrics "$metrics_url" \
        -ca "$WEBHOOK_CERT_DIR/ca.crt" -server-name ray-webhook.ray-webhook-system.svc -kind "$kind" -n "$probes" \
        -spread "$probe_spread" -hold "$probe_hold" -step-timeout "$step_timeout" -taint "$KWOK_TAINT" >"$results/probe-$id-$kind.json" 2>>"$results/probe-$id.log" &
      probe_pids+=($!)
      probe_files+=("$results/probe-$id-$kind.json")
    done
    for kind in "${!probe_pids[@]}"; do
      wait "${probe_pids[$kind]}" || log "phase $id: ${kinds[$kind]}: $(tail -1 "$results/probe-$id.log")"
    done
  fi

  # Admission while the audit runs.
  local ns="audit-scale-admit-$id"
  echo null >"$results/podload-$id.json"
  echo null >"$results/admission-apiserver-$id.json"
  echo null >"$results/admission-own-$id.json"
  if [ "$admission_pods" -gt 0 ]; then
    kc create namespace "$ns" >/dev/null
    kc -n "$ns" create serviceaccount default >/dev/null 2>&1 || true
    kc get --raw /metrics >"$work/adm-before"
    webhook_curl /metrics >"$work/own-before"
    log "phase $id: $admission_pods Pods through the webhook at $admission_rate/s"
    "$PODLOAD" -server "$APISERVER" -ca "$PKI/ca.crt" -cert "$PKI/admin.crt" -key "$PKI/admin.key" -namespace "$ns" \
      -cluster rc-admit -c 16 -rate "$admission_rate" -max "$admission_pods" -duration 1800s \
      -scheduler-name audit-scale-no-scheduler -settled -cluster-domain "${cluster_domain:-cluster.local}" >"$results/podload-$id.json"
    kc get --raw /metrics >"$work/adm-after"
    webhook_curl /metrics >"$work/own-after"
    "$bin/auditscale" hist -metric apiserver_admission_webhook_admission_duration_seconds -label name \
      "$work/adm-before" "$work/adm-after" >"$results/admission-apiserver-$id.json"
    "$bin/auditscale" hist -metric controller_runtime_webhook_latency_seconds \
      "$work/own-before" "$work/own-after" >"$results/admission-own-$id.json"
    if [ "$stop_controllers" = 1 ]; then # no namespace controller to empty it
      kc -n "$ns" delete pods --all --wait=false >/dev/null || log "phase $id: the Pods of $ns are still there"
      kc delete namespace "$ns" --wait=false >/dev/null || true
    else
      kc delete namespace "$ns" --timeout=600s >/dev/null || log "phase $id: namespace $ns is still going"
    fi
  fi
  stop_server

  jq -n --arg phase "$p" --arg id "$id" --argjson order "$order" --arg args "${args[*]:-}" --argjson first "$first_audit" --argjson secs "$secs" --argjson hz "$clock_ticks" \
    --argjson hwm "${hwm:-0}" --argjson rss "${rss:-0}" \
    --argjson api "$((c1[0] - c0[0]))" --argjson etcd "$((c1[1] - c0[1]))" --argjson kwok "$((c1[2] - c0[2]))" \
    --argjson server "$((c1[3] - c0[3]))" --argjson gc_ms "${gc_ms:-0}" --argjson alloc "${alloc_bytes:-0}" \
    --argjson pod_checks "${pod_checks:-0}" --argjson audits "$audits_at_once" \
    --argjson others "$((c1[4] - c0[4]))" --slurpfile sizes "$results/sizes-$id.json" \
    --slurpfile podload "$results/podload-$id.json" --slurpfile adm "$results/admission-apiserver-$id.json" \
    --slurpfile own "$results/admission-own-$id.json" \
    --argjson probes "$(if [ ${#probe_files[@]} -gt 0 ]; then jq -s 'map({(.kind): .}) | add' "${probe_files[@]}"; else echo '{}'; fi)" \
    '{phase: $phase, "label": $id, order: $order, args: $args, first_audit_seconds: $first, window_seconds: $secs,
      server_rss_mib: {peak: ($hwm / 1024), steady: ($rss / 1024)},
      cpu_seconds_per_hour: {"kube-apiserver": ($api / $hz * 3600 / $secs), etcd: ($etcd / $hz * 3600 / $secs),
        kwok: ($kwok / $hz * 3600 / $secs), "ray-webhook": ($server / $hz * 3600 / $secs),
        "kube-apiserver-gc": ($gc_ms / 1000 * 3600 / $secs), "other-watched-audits": ($others / $hz * 3600 / $secs)},
      audits_at_once: $audits,
      apiserver_allocated_mib_per_hour: ($alloc / 1048576 * 3600 / $secs),
      apiserver_pod_consistency_checks: $pod_checks,
      sent_bytes_per_hour: {list: ($sizes[0].list_bytes * 3600 / $secs), watch: ($sizes[0].watch_bytes * 3600 / $secs),
        lists: ($sizes[0].lists * 3600 / $secs)},
      sizes: $sizes[0], probes: $probes, podload: ($podload[0] | if . then del(.failures) else . end),
      admission_apiserver: $adm[0], admission_own: $own[0]}' >"$results/phase-$id.json"
}

# A phase named again (--phases a,c,a,c,a) runs again as a2, c2, ...: windows of one cluster in turn,
# so that each is read against the windows of no audit before and after it.
declare -A times_run=()
order=0
if [ "$kwok_held" = 1 ]; then
  kill -STOP "$kwok_pid"
  log "KWOK stopped until the end (no probes, no admission step)"
fi
for p in ${phases//,/ }; do
  order=$((order + 1))
  times_run[$p]=$((${times_run[$p]:-0} + 1))
  id="$p"
  [ "${times_run[$p]}" = 1 ] || id="$p${times_run[$p]}"
  run_phase "$p" "$id" "$order" || { log "phase $id failed: left out of the table"; stop_server; }
done
ls "$results"/phase-*.json >/dev/null 2>&1 || { echo "audit-scale.sh: no phase finished" >&2; exit 1; }

jq -s --slurpfile scale "$results/scale.json" \
  --argjson cfg "$(jq -n --arg nodes "$nodes" --arg clusters "$clusters" --arg workers "$workers" --arg ns "$namespaces" \
    --arg window "$window" --arg probes "$probes" --arg ray_webhook "$("$ray_webhook" --version 2>/dev/null | head -1)" \
    '{nodes: ($nodes | tonumber), clusters: ($clusters | tonumber), workers_per_cluster: ($workers | tonumber),
      namespaces: ($ns | tonumber), window: $window, probes: ($probes | tonumber), ray_webhook: $ray_webhook}')" \
  '{config: $cfg, scale: $scale[0], phases: sort_by(.order)}' "$results"/phase-*.json >"$results/results.json"
python3 bench/audit-scale-table.py "$results/results.json" | tee "$results/table.md"
log "raw figures in $results"
