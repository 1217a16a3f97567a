#!/usr/bin/env bash
# What a webhook adds to a Pod creation, measured by the API server itself.
#
#   bench/apiserver.sh [--pods N] [--rate R] [--clients C] [--flat-clients C] [--rounds K] [--workers W]
#                      [--parts runs,profile,scale] [--build-dir DIR] [--no-build] [--smoke]
#
# On the end-to-end control plane (scripts/e2e.sh --up: etcd, kube-apiserver,
# ray-webhook installed from deploy/ and reached through its Service), creates
# Ray worker Pods through the API server (tests/e2e/cmd/podload) with, in
# turn:
#   ray-webhook          as deploy/ installs it (the shipped configurations:
#                        one call per Ray Pod, /admit);
#   ray-webhook-settled  the same, with the chart's skipSettledWorkers condition
#                        (charts/ray-webhook/files/settled-worker.cel): no call
#                        for a worker that needs nothing;
#   ray-webhook-2        the same server called twice per Ray Pod, /mutate and
#                        then /validate from a validating entry (webhooks.podCalls=two);
#   controller-runtime   bench/peers' controller-runtime-peer on the same
#                        address and certificate, called twice as ray-webhook-2;
#   null-1, null-2       nginx with njs on the same address and certificate,
#                        allowing every review unchanged (bench/null-webhook/),
#                        called once (the shipped configurations) or twice (as
#                        ray-webhook-2): what the API server's own webhook
#                        client and TLS cost per call, with no webhook work;
#   null-patch           the same nginx, called once, answering every review
#                        with the patch ray-webhook answers for these Pods: what
#                        the API server pays to apply a mutation;
#   none                 the webhook configurations deleted;
# each --rounds times (default 3), starting with another one every round. A
# turn is two runs of --pods creations (default 2,000) into a fresh
# namespace: at an offered rate of --rate a second (default 200, from
# --clients clients, default 16), and flat out (--flat-clients, default 8).
# podload's Pods are workers as KubeRay before 0.5 built them, which
# ray-webhook patches; ray-webhook, ray-webhook-settled, null-1 and none also
# take two more runs (rate-settled, flat-settled) of workers as KubeRay 1.x
# builds them (podload -settled: the FQDN already there, nothing to patch).
# For each run it prints the creations per second, the p50 and p99 of a
# creation's round trip as podload saw it, the CPU time per created Pod of
# kube-apiserver, etcd and the webhook server (/proc), and, from kube-apiserver's own
# /metrics (the difference across the run), the count, p50 and p99 of
# apiserver_admission_webhook_admission_duration_seconds for each webhook
# called. That histogram's buckets (k8s.io/apiserver
# pkg/admission/metrics/metrics.go) start at 5 ms, 25 ms and 100 ms, so a
# quantile inside the first bucket is printed as "<5" with the share of calls
# in it, never interpolated. For ray-webhook it also prints the server's own
# review time from its /metrics (controller_runtime_webhook_latency_seconds,
# first bucket 0.1 ms). Then the medians per setup and mode.
#
# Then a CPU profile of kube-apiserver (/debug/pprof/profile, the cluster
# started with E2E_APISERVER_PROFILING=1) through a 10-second flat-out run of
# none, null-1, null-patch and ray-webhook, and of ray-webhook with settled
# workers, --rounds times in rotation (each run's namespace deleted after it),
# summed by bench/apiserver_profile.py into the webhook client's parts: the
# API server's CPU ms per created Pod in each, and their medians.
#
# Then ray-webhook, ray-webhook-settled, ray-webhook-2, null-1 and none, --rounds times each, for
# KubeRay v1.6.2 (the e2e suite's operator): a RayCluster whose worker group
# (tolerating the KWOK node, so its Pods are scheduled and run) is scaled from
# 0 to --workers (default 300), and the time from the scale-up until the
# operator has every worker stored, as a watch sees them (podload -scale); then
# the medians.
#
# --parts names which of the three (runs, profile, scale) to take; all by default.
# --smoke: the whole path at its smallest (50 Pods a run, 1 round, 2-second profiles of
# none and ray-webhook, 2 workers scaled through the three setups the summary compares,
# the peers built into a temporary dir),
# failing when a figure is missing or zero.
#
# Needs root (the e2e network namespace) and Go (tests/e2e/README.md); builds
# what is missing: build/ray-webhook (scripts/build.sh; --build-dir DIR runs
# DIR/ray-webhook instead, --no-build builds none), the e2e binaries, and
# the peers into build-bench/peers/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

pods=2000
rate=200
clients=16
flat_clients=8
rounds=3
workers=300
parts=runs,profile,scale
build_dir=build
build=1
smoke=0
profile_seconds=10
while [ $# -gt 0 ]; do
  case "$1" in
    --pods) pods="$2"; shift 2 ;;
    --rate) rate="$2"; shift 2 ;;
    --clients) clients="$2"; shift 2 ;;
    --flat-clients) flat_clients="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --workers) workers="$2"; shift 2 ;;
    --parts) parts="$2"; shift 2 ;;
    --build-dir) build_dir="$2"; shift 2 ;;
    --no-build) build=0; shift ;;
    --smoke) smoke=1; pods=50; rounds=1; workers=2; profile_seconds=2; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "apiserver.sh: unknown flag $1 (try --help)" >&2; exit 2 ;;
  esac
done
for n in "$pods" "$rate" "$clients" "$flat_clients" "$rounds" "$workers"; do
  [ "$n" -gt 0 ] 2>/dev/null || { echo "apiserver.sh: every flag but --parts takes a positive whole number" >&2; exit 2; }
done
for p in ${parts//,/ }; do
  case "$p" in runs|profile|scale) ;; *) echo "apiserver.sh: --parts takes runs, profile and scale, not $p" >&2; exit 2 ;; esac
done
want() { case ",$parts," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

[ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
export PATH GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
case "$build_dir" in /*) ;; *) build_dir="$root/$build_dir" ;; esac
if [ "$build_dir" = "$root/build" ] && [ "$build" = 1 ]; then
  [ -x build/ray-webhook ] || bash scripts/build.sh >&2
fi
[ -x "$build_dir/ray-webhook" ] || { echo "apiserver.sh: $build_dir/ray-webhook is missing" >&2; exit 1; }
# The null webhook: Debian's nginx and its njs module.
if ! command -v nginx >/dev/null || [ ! -f /usr/lib/nginx/modules/ngx_http_js_module.so ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q nginx-light libnginx-mod-http-js >/dev/null
fi

tmp="$(mktemp -d -t ray-webhook-apiserver.XXXXXX)"
server_pid=""
operator_pid=""
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
  [ -n "$operator_pid" ] && kill "$operator_pid" 2>/dev/null
  [ -x "$tmp/e2e/stop.sh" ] && "$tmp/e2e/stop.sh" >/dev/null 2>&1
  rm -rf "$tmp"
}
trap cleanup EXIT
peers="$root/build-bench/peers"
[ "$smoke" = 0 ] || peers="$tmp/peers"
bash bench/peers/build.sh "$peers" >&2
peer="$peers/controller-runtime-peer"

# --smoke: each figure that cannot be zero is checked; what fails is collected
# in $tmp/smoke (the checks run in command substitutions too) and ends the run.
smoke_check() { # smoke_check WHAT VALUE [zero]: VALUE a number, above zero unless "zero"
  [ "$smoke" = 1 ] || return 0
  awk -v v="$2" -v z="${3:-}" 'BEGIN { exit !(v ~ /^-?[0-9]*\.?[0-9]+$/ && (z == "zero" ? v >= 0 : v > 0)) }' ||
    echo "$1: '$2'" >>"$tmp/smoke"
}
smoke_verdict() {
  [ "$smoke" = 1 ] || return 0
  if [ -s "$tmp/smoke" ]; then
    echo "apiserver.sh: --smoke: missing or zero figures:" >&2
    sed 's/^/  /' "$tmp/smoke" >&2
    exit 1
  fi
  echo "apiserver.sh: --smoke: every figure present"
}

echo "apiserver.sh: starting the control plane (scripts/e2e.sh --up)" >&2
# E2E_IMAGE=none: the server runs as build/ray-webhook itself. Each turn starts
# it again from its /proc argv; from the image that argv names the image's
# unpacked root, not a command this script can run.
RAY_WEBHOOK_BIN="$build_dir/ray-webhook" E2E_WORK="$tmp/e2e" E2E_APISERVER_PROFILING=1 E2E_IMAGE=none bash scripts/e2e.sh --up >"$tmp/up.log" 2>&1 || { tail -20 "$tmp/up.log" >&2; exit 1; }
# shellcheck disable=SC1091
source "$tmp/e2e/bench.env"
export KUBECONFIG
kc() { "$KUBECTL" "$@"; }

# CPU time per created Pod: the cluster's processes as the framework recorded them.
apiserver_pid="$(awk '$3 == "kube-apiserver" { print $1 }' "$tmp/e2e/processes")"
etcd_pid="$(awk '$3 == "etcd" { print $1 }' "$tmp/e2e/processes")"
[ -n "$apiserver_pid" ] && [ -n "$etcd_pid" ] || { echo "apiserver.sh: no kube-apiserver or etcd in $tmp/e2e/processes" >&2; exit 1; }
clock_ticks="$(getconf CLK_TCK)"
cpu_ticks() { # cpu_ticks PID: user and system time of PID and of its children (nginx's workers), in clock ticks
  python3 - "$1" <<'PY'
import os, sys
root, total = sys.argv[1], 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        continue
    fields = stat[stat.rindex(")") + 2:].split()  # from field 3, state; 4 is the parent
    if pid == root or fields[1] == root:
        total += int(fields[11]) + int(fields[12])  # fields 14 and 15: utime, stime
print(total)
PY
}

# ray-webhook as e2e.sh started it, to start it again after the peer's turn.
server_pid="$RAY_WEBHOOK_PID"
mapfile -d '' ray_webhook_argv <"/proc/$server_pid/cmdline"
cluster_domain="$(tr '\0' '\n' <"/proc/$server_pid/environ" | sed -n 's/^CLUSTER_DOMAIN=//p')"
for k in mutatingwebhookconfiguration validatingwebhookconfiguration; do
  kc get "$k" ray-webhook -o json | jq 'del(.metadata.resourceVersion, .metadata.uid, .metadata.creationTimestamp,
    .metadata.generation, .metadata.managedFields)' >"$tmp/1-$k.json"
done
# Two calls per Ray Pod: the mutating entry at /mutate, and a validating entry
# with its rules and selectors at /validate, failing closed.
jq '.webhooks[0].clientConfig.service.path = "/mutate"' "$tmp/1-mutatingwebhookconfiguration.json" \
  >"$tmp/2-mutatingwebhookconfiguration.json"
jq --slurpfile m "$tmp/1-mutatingwebhookconfiguration.json" '.webhooks = [$m[0].webhooks[0]
    | .name = "validate.pods.ray-webhook.io" | .clientConfig.service.path = "/validate" | del(.reinvocationPolicy)]
    + .webhooks' "$tmp/1-validatingwebhookconfiguration.json" >"$tmp/2-validatingwebhookconfiguration.json"

# null-patch's answer: the patch ray-webhook answers for podload's Pod (the
# namespace in it is one of the runs'; its length, and so the cost, is the same).
worker_patch="$(jq -n --argjson pod "$("$PODLOAD" -print-pod -cluster rc-bench)" '{apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview", request: {uid: "00000000-0000-0000-0000-000000000001", operation: "CREATE",
    kind: {group: "", version: "v1", kind: "Pod"}, resource: {group: "", version: "v1", resource: "pods"},
    namespace: "bench-1", object: $pod}}' |
  "${ray_webhook_argv[0]}" review --admit --cluster-domain "${cluster_domain:-cluster.local}" - | jq -r '.response.patch // empty')"
[ -n "$worker_patch" ] || { echo "apiserver.sh: ray-webhook answered podload's Pod with no patch" >&2; exit 1; }

# One call, and no call for a settled worker: the chart's condition on the mutating entry.
jq --rawfile cel charts/ray-webhook/files/settled-worker.cel \
  '.webhooks[0].matchConditions = [{name: "not-a-settled-worker", expression: ($cel | rtrimstr("\n"))}]' \
  "$tmp/1-mutatingwebhookconfiguration.json" >"$tmp/1s-mutatingwebhookconfiguration.json"
cp "$tmp/1-validatingwebhookconfiguration.json" "$tmp/1s-validatingwebhookconfiguration.json"

webhook_curl() { # webhook_curl PATH [CURL_ARG...]: the server behind the Service's name and address
  local path="$1"
  shift
  curl -fsS --cacert "$WEBHOOK_CERT_DIR/ca.crt" --resolve "ray-webhook.ray-webhook-system.svc:$WEBHOOK_PORT:$WEBHOOK_IP" \
    "$@" "https://ray-webhook.ray-webhook-system.svc:$WEBHOOK_PORT$path"
}
answers() { # answers: the server on the Service's address answers a review
  local i
  for ((i = 0; i < 100; i++)); do
    webhook_curl /mutate -o /dev/null -H 'Content-Type: application/json' --data-binary @bench/fixtures/worker.json \
      2>/dev/null && return 0
    sleep 0.1
  done
  echo "apiserver.sh: no answer on $WEBHOOK_IP:$WEBHOOK_PORT" >&2
  return 1
}
stop_server() {
  [ -n "$server_pid" ] || return 0
  kill "$server_pid" 2>/dev/null || true
  while kill -0 "$server_pid" 2>/dev/null; do sleep 0.1; done
  server_pid=""
}
# The server's own /metrics: ray-webhook exports controller-runtime's
# controller_runtime_webhook_latency_seconds, whose buckets start at 0.1 ms.
server_metrics() { webhook_curl /metrics; }
installed=1
configurations() { # configurations 1|1s|2|none: Ray Pods reviewed in that many calls (1s: settled workers in none)
  [ "$installed" = "$1" ] && return 0
  kc delete --ignore-not-found mutatingwebhookconfiguration ray-webhook >/dev/null
  kc delete --ignore-not-found validatingwebhookconfiguration ray-webhook >/dev/null
  [ "$1" = none ] || kc create -f "$tmp/$1-mutatingwebhookconfiguration.json" -f "$tmp/$1-validatingwebhookconfiguration.json" >/dev/null
  installed="$1"
}
setup() { # setup NAME: that server behind the Service, and the configurations for it
  case "$1" in
    ray-webhook|ray-webhook-settled|ray-webhook-2|controller-runtime|null-1|null-2|null-patch)
      case "$1" in ray-webhook|null-1|null-patch) configurations 1 ;; ray-webhook-settled) configurations 1s ;; *) configurations 2 ;; esac
      stop_server
      if is_ray_webhook "$1"; then
        CLUSTER_DOMAIN="$cluster_domain" "${ray_webhook_argv[@]}" >>"$tmp/ray-webhook.log" 2>&1 &
      elif [ "${1%-*}" = null ]; then
        local patch=""
        [ "$1" != null-patch ] || patch="$worker_patch"
        mkdir -p "$tmp/nginx"
        sed -e "s|@RUN@|$tmp/nginx|g" -e "s|@PATCH@|$patch|" -e "s|@DIR@|$root/bench/null-webhook|g" -e "s|@IP@|$WEBHOOK_IP|" \
          -e "s|@PORT@|$WEBHOOK_PORT|" -e "s|@CERT@|$WEBHOOK_CERT_DIR/tls.crt|" -e "s|@KEY@|$WEBHOOK_CERT_DIR/tls.key|" \
          bench/null-webhook/nginx.conf.in >"$tmp/nginx/nginx.conf"
        nginx -c "$tmp/nginx/nginx.conf" -p "$tmp/nginx" >>"$tmp/null.log" 2>&1 &
      else
        "$peer" --bind "$WEBHOOK_IP" --port "$WEBHOOK_PORT" --tls-cert "$WEBHOOK_CERT_DIR/tls.crt" \
          --tls-key "$WEBHOOK_CERT_DIR/tls.key" --cluster-domain "${cluster_domain:-cluster.local}" \
          >>"$tmp/controller-runtime.log" 2>&1 &
      fi
      server_pid=$!
      answers ;;
    none) configurations none ;;
  esac
  sleep 2 # the API server's webhook configuration informer catches up
}

# quantiles BEFORE AFTER METRIC LABEL: per value of LABEL, "name calls p50 p99
# first share" from the difference of METRIC's histogram across a run; p50 and p99
# in ms as the bucket they fall in ("<5" for the first, "5-25" and so on), first
# the first bucket's bound in ms, share the percentage of calls under it.
quantiles() {
  python3 - "$1" "$2" "$3" "$4" <<'PY'
import re, sys
line = re.compile('^' + re.escape(sys.argv[3]) + r'_bucket\{(.*)\} (\S+)$')
def buckets(path):
    out = {}
    for text in open(path):
        m = line.match(text)
        if not m:
            continue
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        if labels.get("rejected") == "true":
            continue
        key = (labels[sys.argv[4]], float(labels["le"]))
        out[key] = out.get(key, 0) + float(m.group(2))
    return out
before, after = buckets(sys.argv[1]), buckets(sys.argv[2])
for name in sorted({n for n, _ in after}):
    counts = sorted((le, after[(n, le)] - before.get((n, le), 0)) for n, le in after if n == name)
    total = counts[-1][1]
    if total <= 0:
        continue
    def quantile(q):
        for i, (le, c) in enumerate(counts):
            if c >= q * total:
                lo = counts[i - 1][0] * 1000 if i else None
                return f"<{le * 1000:g}" if lo is None else f"{lo:g}-{le * 1000:g}"
    print(name, int(total), quantile(0.5), quantile(0.99), f"{counts[0][0] * 1000:g}", f"{100 * counts[0][1] / total:.1f}")
PY
}

# The created Pods name a scheduler that does not run: they stay Pending at no
# cost, where tens of thousands of unschedulable Pods would keep kube-scheduler
# busy for the rest of the run.
unscheduled=bench-no-scheduler
is_ray_webhook() { case "$1" in ray-webhook|ray-webhook-settled|ray-webhook-2) return 0 ;; *) return 1 ;; esac; }
turn=0
raw="$tmp/raw"
: >"$raw"
podload() { # podload NAMESPACE MODE [PODLOAD_ARG...]: Pods as MODE says (rate, flat, and -settled)
  local ns="$1" mode="$2" c r=0
  shift 2
  case "$mode" in rate*) c=$clients; r=$rate ;; *) c=$flat_clients ;; esac
  "$PODLOAD" -server "$APISERVER" -ca "$PKI/ca.crt" -cert "$PKI/admin.crt" -key "$PKI/admin.key" \
    -namespace "$ns" -cluster rc-bench -c "$c" -rate "$r" -scheduler-name "$unscheduled" \
    -cluster-domain "${cluster_domain:-cluster.local}" $([ "${mode#*-}" != settled ] || echo -settled) "$@"
}
fresh_namespace() { # fresh_namespace: ns (the caller's) set to a new namespace with its default ServiceAccount
  ns="bench-$((++turn))"
  kc create namespace "$ns" >/dev/null
  kc -n "$ns" create serviceaccount default >/dev/null 2>&1 || true
}
run() { # run SETUP MODE: one run of podload into a fresh namespace
  local ns out
  fresh_namespace
  kc get --raw /metrics >"$tmp/before"
  is_ray_webhook "$1" && server_metrics >"$tmp/server-before"
  local cpu_before=("$(cpu_ticks "$apiserver_pid")" "$(cpu_ticks "$etcd_pid")" "$(cpu_ticks "$server_pid")")
  out="$(podload "$ns" "$2" -max "$pods" -duration 600s)"
  local cpu_after=("$(cpu_ticks "$apiserver_pid")" "$(cpu_ticks "$etcd_pid")" "$(cpu_ticks "$server_pid")")
  kc get --raw /metrics >"$tmp/after"
  is_ray_webhook "$1" && server_metrics >"$tmp/server-after"
  local created per p50 p99 failed hooks
  created="$(jq -r .created <<<"$out")"; failed="$(jq -r .failed <<<"$out")"
  per="$(jq -r '.per_second | . * 10 | round / 10' <<<"$out")"
  p50="$(jq -r .p50_ms <<<"$out")"; p99="$(jq -r .p99_ms <<<"$out")"
  hooks="$(quantiles "$tmp/before" "$tmp/after" apiserver_admission_webhook_admission_duration_seconds name |
    awk '{ printf "%s%s: %d calls, p50 %s ms, p99 %s ms (%s %% < %s ms)", (NR > 1) ? "; " : "", $1, $2, $3, $4, $6, $5 }')"
  local own=""
  if is_ray_webhook "$1" && [ -n "$hooks" ]; then
    own="$(quantiles "$tmp/server-before" "$tmp/server-after" controller_runtime_webhook_latency_seconds webhook |
      awk '{ printf "%s%s p50 %s ms, p99 %s ms (%s %% < %s ms)", (NR > 1) ? "; " : "", $1, $3, $4, $6, $5 }')"
    hooks="$hooks | its own: $own"
  fi
  # The patch, where one is answered, is in the stored Pods.
  local fq
  fq="$(kc get --raw "/api/v1/namespaces/$ns/pods?limit=1" |
    jq -r '[.items[0].spec.containers[0].env // [] | .[] | select(.name == "FQ_RAY_IP")] | length')"
  case "$1/$2" in */*-settled) [ "$fq" = 1 ] ;; none/*|null-1/*|null-2/*) [ "$fq" = 0 ] ;; *) [ "$fq" = 1 ] ;; esac ||
    { echo "apiserver.sh: $1: a stored Pod has $fq FQ_RAY_IP entries" >&2; exit 1; }
  # CPU ms per created Pod (the webhook server's not counted where none is called)
  local cpu=() i
  for i in 0 1 2; do
    cpu+=("$(echo "scale=3; (${cpu_after[$i]} - ${cpu_before[$i]}) * 1000 / $clock_ticks / $created" | bc)")
  done
  [ "$1" != none ] || cpu[2]=0
  if [ "$smoke" = 1 ]; then
    smoke_check "$1 $2 created" "$created"
    [ "$created" = "$pods" ] || echo "$1 $2: $created of $pods Pods created" >>"$tmp/smoke"
    [ "$failed" = 0 ] || echo "$1 $2: $failed creations failed" >>"$tmp/smoke"
    smoke_check "$1 $2 creations/s" "$per"; smoke_check "$1 $2 p50" "$p50"; smoke_check "$1 $2 p99" "$p99"
    smoke_check "$1 $2 kube-apiserver CPU/Pod" "${cpu[0]}"
    smoke_check "$1 $2 etcd CPU/Pod" "${cpu[1]}" zero; smoke_check "$1 $2 webhook CPU/Pod" "${cpu[2]}" zero
    # Every setup but none calls a webhook, unless its condition skips settled workers.
    case "$1/$2" in
      none/*|ray-webhook-settled/*-settled) [ -z "$hooks" ] || echo "$1 $2: a webhook was called: $hooks" >>"$tmp/smoke" ;;
      *) [ -n "$hooks" ] || echo "$1 $2: no webhook call in kube-apiserver's /metrics" >>"$tmp/smoke"
         ! is_ray_webhook "$1" || [ -n "$own" ] || echo "$1 $2: no review in ray-webhook's own /metrics" >>"$tmp/smoke" ;;
    esac
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$per" "$p50" "$p99" "${cpu[@]}" >>"$raw"
  printf '%-18s %-12s %5d created, %d failed, %7.1f /s, round trip p50 %6.2f ms, p99 %6.2f ms, CPU/Pod ms: kube-apiserver %.2f etcd %.2f webhook %.2f | %s\n' \
    "$1" "$2" "$created" "$failed" "$per" "$p50" "$p99" "${cpu[@]}" "${hooks:-no webhook called}"
  [ "$failed" = 0 ] || jq -c '.failures[:3]' <<<"$out" >&2
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { # ratio A B: A / B (under --smoke both, and so A / B, above zero)
  smoke_check "a ratio's numerator" "$1"
  smoke_check "a ratio's denominator" "$2"
  echo "scale=2; $1 / $2" | bc
}

if want runs; then
setups=(ray-webhook ray-webhook-settled ray-webhook-2 controller-runtime null-1 null-patch null-2 none)
echo "$pods worker Pods per run; rate: $rate/s offered by $clients clients; flat: $flat_clients clients as fast as they can"
for ((k = 0; k < rounds; k++)); do
  for ((j = 0; j < ${#setups[@]}; j++)); do
    s="${setups[$(((j + k) % ${#setups[@]}))]}"
    setup "$s"
    run "$s" rate
    run "$s" flat
    case "$s" in ray-webhook|ray-webhook-settled|null-1|none) run "$s" rate-settled; run "$s" flat-settled ;; esac
  done
done

echo
med() { # med SETUP MODE COLUMN: the median of a column (3 per second, 4 p50, 5 p99, 6-8 CPU ms per Pod)
  awk -F'\t' -v s="$1" -v m="$2" -v c="$3" '$1 == s && $2 == m { print $c }' "$raw" | median
}
echo "medians over $rounds rounds: creations/s, round trip p50 and p99 (ms), CPU ms per Pod of kube-apiserver, etcd, the webhook"
for m in rate flat rate-settled flat-settled; do
  for s in "${setups[@]}"; do
    grep -q "^$s	$m	" "$raw" || continue
    for c in 3 4 5 6; do smoke_check "median of $s $m column $c" "$(med "$s" "$m" "$c")"; done
    printf '%-18s %-12s %8.1f /s %8.2f %8.2f   %6.3f %6.3f %6.3f\n' "$s" "$m" \
      "$(med "$s" "$m" 3)" "$(med "$s" "$m" 4)" "$(med "$s" "$m" 5)" "$(med "$s" "$m" 6)" "$(med "$s" "$m" 7)" "$(med "$s" "$m" 8)"
  done
done

echo "ray-webhook against null-1 at $rate/s offered: round trip p50 $(ratio "$(med ray-webhook rate 4)" "$(med null-1 rate 4)")x," \
  "p99 $(ratio "$(med ray-webhook rate 5)" "$(med null-1 rate 5)")x;" \
  "flat out against none: $(ratio "$(med ray-webhook flat 3)" "$(med none flat 3)")x the creations per second"
echo "ray-webhook against null-patch (the same patch, no webhook work) at $rate/s offered:" \
  "p50 $(ratio "$(med ray-webhook rate 4)" "$(med null-patch rate 4)")x, p99 $(ratio "$(med ray-webhook rate 5)" "$(med null-patch rate 5)")x;" \
  "flat out $(ratio "$(med ray-webhook flat 3)" "$(med null-patch flat 3)")x the creations per second"
echo "settled workers (nothing to patch), ray-webhook against null-1 at $rate/s offered:" \
  "p50 $(ratio "$(med ray-webhook rate-settled 4)" "$(med null-1 rate-settled 4)")x," \
  "p99 $(ratio "$(med ray-webhook rate-settled 5)" "$(med null-1 rate-settled 5)")x;" \
  "flat out against none: $(ratio "$(med ray-webhook flat-settled 3)" "$(med none flat-settled 3)")x," \
  "ray-webhook-settled $(ratio "$(med ray-webhook-settled flat-settled 3)" "$(med none flat-settled 3)")x"

fi

# ---- where kube-apiserver's CPU goes: a profile through a flat-out run
profiles="$tmp/profiles"
profile_run() { # profile_run SETUP MODE
  local ns out created
  setup "$1"
  fresh_namespace
  kc get --raw "/debug/pprof/profile?seconds=$profile_seconds" >"$tmp/profile.pb.gz" &
  local profiler=$!
  out="$(podload "$ns" "$2" -max 1000000 -duration "${profile_seconds}s")"
  wait "$profiler" || { echo "apiserver.sh: kube-apiserver gave no profile" >&2; exit 1; }
  created="$(jq -r .created <<<"$out")"
  go tool pprof -traces "$tmp/profile.pb.gz" >"$tmp/traces" 2>/dev/null
  printf '%-18s %-12s %5d created in %d s | %s\n' "$1" "$2" "$created" "$profile_seconds" \
    "$(python3 bench/apiserver_profile.py "$created" <"$tmp/traces")"
  python3 bench/apiserver_profile.py --tsv "$created" <"$tmp/traces" >"$tmp/profile.tsv"
  if [ "$smoke" = 1 ]; then
    smoke_check "profile $1 $2 created" "$created"
    smoke_check "profile $1 $2 kube-apiserver CPU/Pod" "$(tail -1 "$tmp/profile.tsv" | cut -f1)"
    [ "$1" = none ] || smoke_check "profile $1 $2 webhook client CPU/Pod" "$(tail -1 "$tmp/profile.tsv" | cut -f2)"
  fi
  head -1 "$tmp/profile.tsv" >"$tmp/profile-columns"
  printf '%s\t%s\t%s\n' "$1" "$2" "$(tail -1 "$tmp/profile.tsv")" >>"$profiles"
  # The next run finds the store as large as this one did.
  kc delete namespace "$ns" --timeout=180s >/dev/null
}
if want profile; then
  : >"$profiles"
  profile_setups=("none flat" "null-1 flat" "null-patch flat" "ray-webhook flat" "ray-webhook flat-settled")
  # --smoke: each setup's own code has run above; here one without a webhook and one with is the whole path.
  [ "$smoke" = 0 ] || profile_setups=("none flat" "ray-webhook flat")
  echo
  echo "kube-apiserver's CPU profile through $profile_seconds s of flat-out creations, ms per created Pod"
  for ((k = 0; k < rounds; k++)); do
    for ((j = 0; j < ${#profile_setups[@]}; j++)); do
      # shellcheck disable=SC2086
      profile_run ${profile_setups[$(((j + k) % ${#profile_setups[@]}))]}
    done
  done
  echo "medians over $rounds profiles, kube-apiserver CPU ms per created Pod:"
  columns="$(tr '\t' '\n' <"$tmp/profile-columns" | wc -l)"
  for sm in "${profile_setups[@]}"; do
    read -r s m <<<"$sm"
    line="$(printf '%-18s %-12s' "$s" "$m")"
    for ((c = 1; c <= columns; c++)); do
      line+="$(printf ' %s %s' "$(cut -f "$c" "$tmp/profile-columns")" \
        "$(awk -F'\t' -v s="$s" -v m="$m" -v c=$((c + 2)) '$1 == s && $2 == m { print $c }' "$profiles" | median)")"
      smoke_check "profile median of $s $m column $c" \
        "$(awk -F'\t' -v s="$s" -v m="$m" -v c=$((c + 2)) '$1 == s && $2 == m { print $c }' "$profiles" | median)" "$([ "$c" = 1 ] || echo zero)"
      if [ "$c" -lt "$columns" ]; then line+=","; fi
    done
    echo "$line"
  done
fi
want scale || { smoke_verdict; exit 0; }

# ---- the operator's scale-up through each setup
release=kuberay-v1.6.2
crds="$(cd "$E2E_DIR/$release" && go list -m -f '{{.Dir}}' github.com/ray-project/kuberay/ray-operator)/config/crd/bases"
kc apply --server-side --force-conflicts -f "$crds" >/dev/null
kc wait --for condition=established --timeout=60s -f "$crds" >/dev/null
probe_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
metrics_port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$BIN/$release" --metrics-addr "127.0.0.1:$metrics_port" --health-probe-bind-address "127.0.0.1:$probe_port" \
  --enable-leader-election=false >>"$tmp/operator.log" 2>&1 &
operator_pid=$!
for ((i = 0; i < 600; i++)); do curl -fsS "http://127.0.0.1:$probe_port/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
scale_run() { # scale_run SETUP: seconds from the scale-up to every worker stored
  local ns="scale-$((++turn))" out
  kc create namespace "$ns" >/dev/null
  for ((i = 0; i < 100; i++)); do kc -n "$ns" get serviceaccount default >/dev/null 2>&1 && break; sleep 0.2; done
  sed -e "s|@NAME@|rc-scale|" -e "s|@REPLICAS@|0|" -e "s|@MAX_REPLICAS@|$workers|" -e "s|@KWOK_TAINT@|$KWOK_TAINT|g" \
    "$E2E_DIR/testdata/raycluster-v1.yaml" | kc -n "$ns" create -f - >/dev/null
  for ((i = 0; i < 600; i++)); do
    [ "$(kc -n "$ns" get pods -l ray.io/cluster=rc-scale,ray.io/node-type=head -o name | wc -l)" -ge 1 ] && break
    sleep 0.2
  done
  # podload patches the replicas and watches the workers arrive: no client polls meanwhile.
  out="$("$PODLOAD" -server "$APISERVER" -ca "$PKI/ca.crt" -cert "$PKI/admin.crt" -key "$PKI/admin.key" \
    -namespace "$ns" -scale rc-scale -to "$workers" -duration 300s)" || { echo "apiserver.sh: $1: $out" >&2; exit 1; }
  printf '%s\t%s\n' "$1" "$(jq -r .seconds <<<"$out")" >>"$tmp/scale"
  smoke_check "scale $1 seconds" "$(jq -r .seconds <<<"$out")"
  [ "$smoke" = 0 ] || [ "$(jq -r .workers <<<"$out")" = "$workers" ] ||
    echo "scale $1: $(jq -r .workers <<<"$out") of $workers workers" >>"$tmp/smoke"
  printf '%-18s %d of %d workers stored in %6.2f s\n' "$1" "$(jq -r .workers <<<"$out")" "$workers" "$(jq -r .seconds <<<"$out")"
  # Its 300 Pods go before the next turn begins.
  kc delete namespace "$ns" --timeout=180s >/dev/null
}
: >"$tmp/scale"
# (not null-patch: its patch is for podload's Pod, and these workers need none from ray-webhook)
scale_setups=(ray-webhook ray-webhook-settled ray-webhook-2 null-1 none)
# --smoke: the three that the last line compares.
[ "$smoke" = 0 ] || scale_setups=(ray-webhook ray-webhook-settled none)
echo
echo "KubeRay $release scaling one worker group from 0 to $workers"
for ((k = 0; k < rounds; k++)); do
  for ((j = 0; j < ${#scale_setups[@]}; j++)); do
    s="${scale_setups[$(((j + k) % ${#scale_setups[@]}))]}"
    setup "$s"
    scale_run "$s"
  done
done
echo "medians over $rounds rounds: seconds from the scale-up to $workers workers stored"
scale_median() { awk -F'\t' -v s="$1" '$1 == s { print $2 }' "$tmp/scale" | median; }
for s in "${scale_setups[@]}"; do
  printf '%-18s %8.2f s\n' "$s" "$(scale_median "$s")"
  smoke_check "scale median of $s" "$(scale_median "$s")"
done
echo "against none: ray-webhook $(ratio "$(scale_median ray-webhook)" "$(scale_median none)")x the time," \
  "ray-webhook-settled $(ratio "$(scale_median ray-webhook-settled)" "$(scale_median none)")x"
smoke_verdict
