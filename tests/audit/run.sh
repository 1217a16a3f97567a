#!/usr/bin/env bash
# `ray-webhook audit`, the real binary: on the dumps and manifests of
# tests/fixtures/audit (its table, its JSON, exit codes 0, 1 and 2 and the
# errors that name file and document), against mock-kube-api's chunked lists
# (the live mode), and the server's --audit-interval gauges on /metrics, in each --audit-mode.
#   run.sh --server BIN --fixtures DIR --certs GENERATE_SH --mock-kube-api BIN
set -uo pipefail
# shellcheck source=../deploy/lib.sh
source "$(dirname "$0")/../deploy/lib.sh"
# shellcheck source=../support/mock_kube_api.sh
source "$(dirname "$0")/../support/mock_kube_api.sh"
while [ $# -gt 0 ]; do
  case "$1" in
    --server) server="$2"; shift 2 ;;
    --fixtures) fixtures="$2"; shift 2 ;;
    --certs) certs="$2"; shift 2 ;;
    --mock-kube-api) mock="$2"; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
need jq "the JSON checks"
need curl "the /metrics checks"
work="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
dumps="$fixtures/audit"

# audit ARGS...: runs the audit; sets $rc, stdout in $work/out, stderr in $work/err.
audit() { "$server" audit "$@" >"$work/out" 2>"$work/err"; rc=$?; }
# check WHAT COMMAND...
check() { local what="$1"; shift; if "$@"; then pass "$what"; else fail "$what (rc=$rc; stdout: $(head -c 600 "$work/out"); stderr: $(head -c 600 "$work/err"))"; fi; }
json() { jq -e "$1" "$work/out" >/dev/null; }
out_has() { grep -qF -- "$1" "$work/out"; }
err_is() { [ "$(cat "$work/err")" = "$1" ]; }
err_starts() { [[ "$(cat "$work/err")" == "$1"* ]]; }

# Files.
audit "$dumps/clean-cluster.json"
check "a clean cluster exits 0 and says so" [ "$rc" = 0 ]
check "the clean table is the summary line alone" \
  [ "$(cat "$work/out")" = "Read 3 Pods, 1 RayCluster, 0 RayJobs, 0 RayServices, 0 RayCronJobs; no findings." ]

audit "$dumps/extra-head.json"
check "an extra head exits 1" [ "$rc" = 1 ]
check "the table has a header and a row per finding" \
  bash -c "head -1 '$work/out' | grep -q '^RULE  *KIND  *NAMESPACE  *NAME  *FIELD$' \
    && grep -q '^extra-head  *RayCluster  *ns1  *raycluster-sample  *-$' '$work/out' \
    && grep -q '^head-name  *Pod  *ns1  *raycluster-sample-head-x7k2p  *metadata.name$' '$work/out'"
check "the message is wrapped beneath its row" out_has '    RayCluster "raycluster-sample" has 2 live head Pods: "raycluster-sample-head" (Running),'
check "the table closes with what was read and the findings by rule" \
  out_has "Read 6 Pods, 1 RayCluster, 0 RayJobs, 0 RayServices, 0 RayCronJobs; 2 findings: extra-head 1, head-name 1."
check "nothing on stderr" [ ! -s "$work/err" ]

audit --output json "$dumps/extra-head.json"
check "--output json exits 1 too" [ "$rc" = 1 ]
check "the JSON summary counts every rule" json '.summary.findings == 2 and .summary.rayClustersWithExtraHeads == 1
  and .summary.findingsByRule["extra-head"] == 1 and .summary.findingsByRule["worker-drift"] == 0
  and (.summary.findingsByRule | length) == 10 and .summary.read.pods == 6'
check "a JSON finding names its object and source" json '.findings[] | select(.rule == "extra-head")
  | .kind == "RayCluster" and .namespace == "ns1" and .name == "raycluster-sample"
  and (.source | endswith("extra-head.json document 1 item 2"))'

audit --output report "$dumps/extra-head.json"
check "--output report exits 1 too" [ "$rc" = 1 ]
check "--output report: a List of one openreports.io Report for ns1 with a failed result per finding" \
  json '.kind == "List" and (.items | length) == 1 and .items[0].apiVersion == "openreports.io/v1alpha1"
  and .items[0].kind == "Report" and .items[0].metadata == {name: "ray-webhook-audit", namespace: "ns1",
    labels: {"app.kubernetes.io/managed-by": "ray-webhook"}}
  and .items[0].summary.fail == 2 and ([.items[0].results[] | [.rule, .result, .severity, .resources[0].kind, .resources[0].name]]
    | sort) == [["extra-head", "fail", "critical", "RayCluster", "raycluster-sample"],
                ["head-name", "fail", "medium", "Pod", "raycluster-sample-head-x7k2p"]]'
audit --output report --report-api wgpolicyk8s.io/v1alpha2 "$dumps/extra-head.json"
check "--report-api wgpolicyk8s.io/v1alpha2: a PolicyReport" \
  json '.items[0].apiVersion == "wgpolicyk8s.io/v1alpha2" and .items[0].kind == "PolicyReport" and (.items[0] | has("source") | not)'

audit -o json "$dumps/shallow-copy.json"
check "shallow-copied workers: two odd variants, two duplicate mounts, three unmutated" \
  json '.summary.findingsByRule | .["worker-drift"] == 2 and .["duplicate-mount"] == 2 and .unmutated == 3'
check "worker-drift names the odd field" json '[.findings[] | select(.rule == "worker-drift") | .fieldPath]
  == ["spec.containers[0].volumeMounts[2] (added)", "spec.containers[0].volumeMounts[2] (added)"]'
jq 'del(.findings[].source)' "$work/out" >"$work/from-json"
audit -o json "$dumps/shallow-copy.yaml"
jq 'del(.findings[].source)' "$work/out" >"$work/from-yaml"
check "the -o yaml dump gives the same report as the -o json one" cmp -s "$work/from-json" "$work/from-yaml"

audit -o json "$dumps/manifests.yaml"
check "manifests: exit 1" [ "$rc" = 1 ]
check "manifests: the template rules with their field paths" json '
  ([.findings[] | select(.rule == "duplicate-mount") | "\(.kind)/\(.name)"] | sort) == ["RayCluster/raycluster-gpu", "RayJob/rayjob-sample"]
  and ([.findings[] | select(.rule == "bare-address") | .fieldPath] | length) == 1
  and (.findings[] | select(.kind == "RayCluster" and .rule == "duplicate-mount") | .fieldPath)
      == "spec.workerGroupSpecs[1].template.spec.containers[0].volumeMounts[1]"'
check "manifests: the ConfigMap skipped, the empty document ignored, the RayService read" \
  json '.summary.read == {"pods": 0, "rayClusters": 2, "rayJobs": 1, "rayServices": 1, "rayCronJobs": 0, "skipped": 1}'

"$server" audit -o json - "$dumps/extra-head.json" <"$dumps/clean-cluster.json" >"$work/out" 2>"$work/err"; rc=$?
check "stdin and files together" json '.summary.read.pods == 9 and (.findings[0].source | endswith("extra-head.json document 1 item 5"))'

# Cost leaks, judged by the clock: the dump's recent job (eval-nightly, ended at 09:55:00Z) is made to
# have ended a minute ago, so that it stays within its wait and the grace; the others ended days ago.
sed "s/2026-12-05T09:55:00Z/$(date -u -d '1 minute ago' +%Y-%m-%dT%H:%M:%SZ)/" "$dumps/cost-leaks.json" >"$work/cost-leaks.json"
audit -o json "$work/cost-leaks.json"
check "cost leaks: exit 1, a finished job's cluster, a stuck upgrade and two suspended loops, nothing else" bash -c "[ $rc = 1 ]"
check "cost leaks: the four findings, by rule and object" json '[.findings[] | [.rule, .kind, .namespace, .name]] ==
  [["finished-job-cluster", "RayJob", "ml", "train-llm"], ["stuck-upgrade", "RayService", "ml", "serve-llm"],
   ["suspended-loop", "RayJob", "ml", "batch-resumed"], ["suspended-loop", "RayService", "ml", "serve-chat"]]
  and .summary.findingsByRule["finished-job-cluster"] == 1 and .summary.findingsByRule["stuck-upgrade"] == 1
  and .summary.findingsByRule["suspended-loop"] == 2'
check "suspended loop: the RayService's suspended cluster and what it would ask for" json '.findings[3].message
  | test("^RayService serve-chat.s active RayCluster serve-chat-raycluster-m5n6p has been suspended [(]spec.suspend true[)] for ")
    and test("Running, it would ask for 3 Pod[(]s[)] requesting 20 CPU[(]s[)] and 2 GPU[(]s[)]")'
check "cost leaks: what the kept cluster holds" json '.findings[0].message
  | test("its RayCluster train-llm-raycluster-x7k2p still runs: 3 Pod[(]s[)] requesting 20 CPU[(]s[)] and 2 GPU[(]s[)]")'
audit -o json --audit-finished-job-grace 10080m --audit-pending-cluster-limit 10080m --audit-suspended-limit 10080m "$work/cost-leaks.json"
check "cost leaks: longer limits find none" json '.findings == [] and .summary.findingsByRule["stuck-upgrade"] == 0
  and .summary.findingsByRule["suspended-loop"] == 0'
audit --output report "$work/cost-leaks.json"
check "cost leaks: policy report results, medium; suspended loops high" json '[.items[].results[] | [.rule, .result, .severity, .resources[0].kind, .resources[0].name]] | sort
  == [["finished-job-cluster", "fail", "medium", "RayJob", "train-llm"], ["stuck-upgrade", "fail", "medium", "RayService", "serve-llm"],
      ["suspended-loop", "fail", "high", "RayJob", "batch-resumed"], ["suspended-loop", "fail", "high", "RayService", "serve-chat"]]'
audit --audit-finished-job-grace 5h "$work/cost-leaks.json"
check "a bad --audit-finished-job-grace: exit 2 naming it" \
  err_starts "ray-webhook: audit: --audit-finished-job-grace must be a duration such as 10m or 90s"

# Bad input: exit 2, one line naming the file and document, nothing on stdout.
audit "$dumps/bad/truncated.json"
check "truncated JSON: exit 2 naming file and document" \
  bash -c "[ $rc = 2 ] && [ ! -s '$work/out' ] && grep -q '^ray-webhook audit: $dumps/bad/truncated.json document 1: not JSON: ' '$work/err'"
audit "$dumps/clean-cluster.json" "$dumps/bad/not-yaml.yaml"
check "broken YAML after a good file: exit 2 with line and column, no report" \
  bash -c "[ $rc = 2 ] && [ ! -s '$work/out' ] && grep -q '^ray-webhook audit: $dumps/bad/not-yaml.yaml document 1, line [0-9]*, column [0-9]*: not YAML' '$work/err'"
audit "$dumps/bad/mount-path-number.yaml"
check "a field of the wrong type: exit 2 naming document 2 and the field" \
  err_is "ray-webhook audit: $dumps/bad/mount-path-number.yaml document 2: RayCluster default/typed-wrong: spec.headGroupSpec.template.spec.containers[0].volumeMounts[].mountPath: expected a string"
audit "$dumps/bad/alias-bomb.yaml"
check "an alias bomb: exit 2" bash -c "[ $rc = 2 ] && grep -q 'aliases expand to more than 100000 values' '$work/err'"
audit "$dumps/bad/deep.json"
check "a deeply nested document: exit 2" err_is "ray-webhook audit: $dumps/bad/deep.json document 1: nested deeper than 128 levels, which no Kubernetes object is"
audit "$dumps/bad/list-item-not-object.json"
check "a List item that is not an object: exit 2" err_is "ray-webhook audit: $dumps/bad/list-item-not-object.json document 1 item 2: not an object"
audit "$work/missing.yaml"
check "a missing file: exit 2" err_is "ray-webhook audit: cannot read $work/missing.yaml"
env -u KUBERNETES_SERVICE_HOST "$server" audit >"$work/out" 2>"$work/err"; rc=$?
check "nothing to read: exit 2" \
  bash -c "[ $rc = 2 ] && [ \"\$(cat '$work/err')\" = 'ray-webhook: audit: nothing to read: give files (or - for stdin), or --kube-api-server (or run in a cluster)' ]"
audit --output yaml "$dumps/clean-cluster.json"
check "a bad --output: exit 2" [ "$rc" = 2 ]

# The live cluster: mock-kube-api's chunked lists of tests/fixtures/kube-api/objects.json.
bash "$certs" --out "$work/certs" 2>/dev/null || { fail "certificate generation"; finish; }
token=mock-token-0123456789abcdef
printf '%s' "$token" >"$work/token"
printf 'not-the-token' >"$work/bad-token"
start_mock_kube_api "$mock" "$work" "$token" --objects "$fixtures/kube-api/objects.json" || { fail "mock-kube-api did not start"; finish; }
api=(--kube-api-server "https://127.0.0.1:$api_port" --kube-ca-file "$work/certs/ca.crt")

audit -o json "${api[@]}" --kube-token-file "$work/token"
check "live: the cluster's findings, exit 1" bash -c "[ $rc = 1 ]" 
check "live: every namespace, the extra head and the odd workers" json '.summary.read == {"pods": 9, "rayClusters": 1, "rayJobs": 1, "rayServices": 0, "rayCronJobs": 0, "skipped": 0}
  and .summary.findingsByRule["extra-head"] == 1 and .summary.findingsByRule["worker-drift"] == 2
  and .summary.rayClustersWithExtraHeads == 1 and (.findings[0].source | startswith("API pods page 1"))'
check "live: a resource the API does not serve is a note" json '.summary.notes == ["rayservices: not served by the Kubernetes API (KubeRay'"'"'s CRDs not installed?)", "raycronjobs: not served by the Kubernetes API (KubeRay'"'"'s CRDs not installed?)"]'
check "live: Pods listed with the Ray Pod selector" \
  grep -qx 'GET /api/v1/pods selector=ray.io/node-type in (head,worker),ray.io/cluster auth=ok' "$work/api.log"
check "live: the ray.io lists asked for" bash -c "grep -qx 'GET /apis/ray.io/v1/rayclusters selector= auth=ok' '$work/api.log' \
  && grep -qx 'GET /apis/ray.io/v1/rayjobs selector= auth=ok' '$work/api.log'"
audit "${api[@]}" --kube-token-file "$work/token" --namespace default
check "live: one namespace" bash -c "[ $rc = 1 ] && grep -q '^Read 3 Pods, 0 RayClusters, 0 RayJobs, 0 RayServices, 0 RayCronJobs;' '$work/out' \
  && grep -qx 'GET /api/v1/namespaces/default/pods selector=ray.io/node-type in (head,worker),ray.io/cluster auth=ok' '$work/api.log'"
audit "${api[@]}" --kube-token-file "$work/bad-token"
check "live: a refused token is exit 2 with the API's answer" \
  err_is "ray-webhook audit: listing /api/v1/pods: the Kubernetes API answered 401: Unauthorized"
audit "${api[@]}" --kube-token-file "$work/token" --kube-ca-file "$work/certs/tls.crt"
check "live: an untrusted API server is exit 2" bash -c "[ $rc = 2 ] && grep -q 'no answer from the Kubernetes API' '$work/err'"

# Cost leaks live: the dump's objects served by a second mock-kube-api give the dump's findings.
found() { jq -c '[.findings[] | [.rule, .kind, .namespace, .name, .fieldPath]]' "$work/out"; }
audit -o json "$work/cost-leaks.json"
dump_found="$(found)"
expected_found='[["finished-job-cluster","RayJob","ml","train-llm","status.rayClusterName"],["stuck-upgrade","RayService","ml","serve-llm","status.pendingServiceStatus.rayClusterName"],["suspended-loop","RayJob","ml","batch-resumed","status.jobDeploymentStatus"],["suspended-loop","RayService","ml","serve-chat","status.activeServiceStatus.rayClusterName"]]'
mkdir -p "$work/cost" && ln -s "$work/certs" "$work/cost/certs"
jq '{items: .items, unserved: []}' "$work/cost-leaks.json" >"$work/cost/objects.json"
first_mock_pid=$mock_pid first_api_port=$api_port
if start_mock_kube_api "$mock" "$work/cost" "$token" --objects "$work/cost/objects.json"; then
  audit -o json --kube-api-server "https://127.0.0.1:$api_port" --kube-ca-file "$work/certs/ca.crt" --kube-token-file "$work/token"
  same_as_dump() { [ "$rc" = 1 ] && [ "$(found)" = "$dump_found" ] && [ "$dump_found" = "$expected_found" ]; }
  check "live: the cost leaks of the dump, the same findings" same_as_dump
  kill "$mock_pid"; wait "$mock_pid" 2>/dev/null
else
  fail "the second mock-kube-api did not start"
fi
mock_pid=$first_mock_pid api_port=$first_api_port

# The server's audit, in each --audit-mode: the gauges on /metrics, an API that goes away, the log.
server_audit() {
  local mode="$1"
  port=""
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    port=$((20000 + RANDOM % 20000))
    "$server" serve --bind 127.0.0.1 --port "$port" --probe-port 0 --tls-cert "$work/certs/tls.crt" \
      --tls-key "$work/certs/tls.key" --drain-delay 0s "${api[@]}" --kube-token-file "$work/token" \
      --audit-interval 1s --audit-mode "$mode" >"$work/server.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 50); do
      curl -sf --cacert "$work/certs/ca.crt" "https://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$server_pid" 2>/dev/null; then pids+=("$server_pid"); break; fi
    wait "$server_pid" 2>/dev/null; server_pid=""
  done
  [ -n "${server_pid:-}" ] || { fail "$mode: the server did not start: $(cat "$work/server.log")"; finish; }
  metrics() { curl -sf --cacert "$work/certs/ca.crt" "https://127.0.0.1:$port/metrics" >"$work/metrics"; }
  for _ in $(seq 1 100); do
    metrics && grep -q '^ray_webhook_rayclusters_with_extra_heads 1$' "$work/metrics" && break
    sleep 0.1
  done
  check "$mode: gauge: one RayCluster with extra heads" grep -qx 'ray_webhook_rayclusters_with_extra_heads 1' "$work/metrics"
  check "$mode: gauge: findings by rule, zeros included" bash -c "grep -qx 'ray_webhook_audit_findings{rule=\"worker-drift\"} 2' '$work/metrics' \
    && grep -qx 'ray_webhook_audit_findings{rule=\"extra-head\"} 1' '$work/metrics' \
    && grep -qx 'ray_webhook_audit_findings{rule=\"duplicate-env\"} 0' '$work/metrics' \
    && grep -qx 'ray_webhook_audit_findings{rule=\"stuck-upgrade\"} 0' '$work/metrics' \
    && [ \"\$(grep -c '^ray_webhook_audit_findings{' '$work/metrics')\" = 10 ]"
  check "$mode: gauge: the last success time is set" \
    bash -c "awk '\$1 == \"ray_webhook_audit_last_success_timestamp_seconds\" && \$2 > 1.7e9 {ok=1} END {exit !ok}' '$work/metrics'"
  kill "$mock_pid"; wait "$mock_pid" 2>/dev/null
  for _ in $(seq 1 50); do
    metrics && grep -q '^ray_webhook_audit_failures_total [1-9]' "$work/metrics" && break
    sleep 0.1
  done
  check "$mode: an API that is gone counts failures" grep -q '^ray_webhook_audit_failures_total [1-9]' "$work/metrics"
  check "$mode: and the gauges keep the last result" grep -qx 'ray_webhook_rayclusters_with_extra_heads 1' "$work/metrics"
  check "$mode: reviews are still answered" curl -sf --cacert "$work/certs/ca.crt" -o /dev/null -H 'Content-Type: application/json' \
    --data-binary "@$fixtures/reviews/kuberay-1.7-worker.json" "https://127.0.0.1:$port/mutate"
  start=$(date +%s%N)
  kill -TERM "$server_pid"; wait "$server_pid"; status=$?
  took_ms=$(( ($(date +%s%N) - start) / 1000000 ))
  check "$mode: SIGTERM stops the server and its audit thread (exit $status in ${took_ms}ms)" [ "$status" = 0 ] && [ "$took_ms" -lt 5000 ]
  # Logs are written in batches; all of them are there once the server has exited.
  check "$mode: each audit is logged" grep -q ' info audit pods=9 rayclusters=1 rayjobs=1 rayservices=0 raycronjobs=0 findings=' "$work/server.log"
  if [ "$mode" = watch ]; then
    # Each collection's problem is logged once per kind, however often it is retried.
    check "$mode: each failure is logged once per collection and kind" bash -c "grep -o 'warning audit: [a-z]* [a-z_]*:' '$work/server.log' \
      | sort | uniq -c | awk '{n++} \$1 != 1 {bad=1} END {exit !(n >= 1 && !bad)}'"
  else
    check "$mode: the failure is logged once" bash -c "[ \"\$(grep -c 'audit of the cluster failed' '$work/server.log')\" = 1 ]"
  fi
}
server_audit watch
start_mock_kube_api "$mock" "$work" "$token" --objects "$fixtures/kube-api/objects.json" || { fail "mock-kube-api did not start again"; finish; }
api=(--kube-api-server "https://127.0.0.1:$api_port" --kube-ca-file "$work/certs/ca.crt")
server_audit list
env -u KUBERNETES_SERVICE_HOST timeout 10 "$server" serve --bind 127.0.0.1 --port "$port" --probe-port 0 \
  --tls-cert "$work/certs/tls.crt" --tls-key "$work/certs/tls.key" --audit-interval 1m >"$work/out" 2>"$work/err"; rc=$?
check "--audit-interval without an API: the server does not start" \
  bash -c "[ $rc = 1 ] && grep -q -- '--audit-interval needs the Kubernetes API: run in a cluster or give --kube-api-server' '$work/err'"
finish
