# Checks 23e and 23f of scripts/e2e.sh, sourced by it: an extra head of a
# running RayCluster, made behind the operator's back through a path the
# webhooks do not see (a Pod created without Ray labels, then labelled: the
# Pod webhooks match CREATE only), is reported by `ray-webhook audit` reading
# the live API as the webhook's ServiceAccount with deploy/overlays/audit's
# RBAC (23e), and by the gauge of a replica run with --audit-interval (23f).
# Uses e2e.sh's kc, as_list, ray_pod, start_ray_webhook, free_port,
# wait_until, pass, fail, show, log, pids and its variables ($work, $logs,
# $ray_webhook, $apiserver_port, $pki, $webhook_ip2, $webhook_certs).
#
#   audit_checks NAMESPACE CLUSTER   on a RayCluster of the running operator that has one live head

# audit_live [FLAG...]: ray-webhook audit against kube-apiserver with the webhook's token; stdout
# in $work/audit.out, stderr in $work/audit.err, the exit status in $audit_rc.
audit_live() {
  "$ray_webhook" audit --kube-api-server "https://127.0.0.1:$apiserver_port" --kube-ca-file "$pki/ca.crt" \
    --kube-token-file "$work/ray-webhook.token" "$@" >"$work/audit.out" 2>"$work/audit.err"
  audit_rc=$?
}

audit_checks() {
  local ns="$1" cluster="$2" extra="$2-head-behind" before_rc before_extra why="" port probe n1="" n2=""
  local s23e="23e ray-webhook audit on the live API (deploy/overlays/audit's RBAC): a head made behind the operator's back (created unlabelled, then labelled) is an extra-head finding naming both heads, exit 1; without the overlay's grant, exit 2 with the API's 403"
  local s23f="23f serve --audit-interval: ray_webhook_rayclusters_with_extra_heads counts the cluster while the extra head lives, and drops it once it is deleted"

  # Before: the base RBAC has no ray.io grant, and the cluster has one head.
  audit_live --output json
  local forbidden_rc=$audit_rc forbidden_err
  forbidden_err="$(cat "$work/audit.err")"
  kc kustomize "$work/src/deploy/overlays/audit" >"$work/rendered-audit.yaml" 2>"$logs/kustomize-audit.log" \
    && as_list "$work/rendered-audit.yaml" | jq '.items[] | select(.kind == "ClusterRole")' \
    | kc apply -f - >"$logs/audit-rbac.log" 2>&1 || why="$why the audit overlay's ClusterRole did not apply;"
  # kube-apiserver's RBAC authorizer sees the new rule once its informer has it.
  audit_allowed() { audit_live --output json --namespace "$ns"; [ "$audit_rc" != 2 ]; }
  wait_until 10 "the audit overlay's grant" audit_allowed
  audit_live --output json --namespace "$ns"
  before_rc=$audit_rc
  before_extra="$(jq --arg c "$cluster" '[.findings[] | select(.rule == "extra-head" and .name == $c)] | length' \
    "$work/audit.out" 2>/dev/null)"

  # The extra head: no labels at CREATE (no webhook is called), then the labels KubeRay gives a head.
  ray_pod "$extra" "$cluster" head 'del(.metadata.labels)' | kc -n "$ns" create -f - >"$logs/audit-extra-head.log" 2>&1 \
    && kc -n "$ns" label pod "$extra" "ray.io/cluster=$cluster" ray.io/node-type=head ray.io/group=headgroup \
      >>"$logs/audit-extra-head.log" 2>&1 || why="$why the extra head could not be made ($(tail -1 "$logs/audit-extra-head.log"));"

  audit_live --output json
  local found
  found="$(jq -c --arg c "$cluster" --arg n "$ns" --arg e "$extra" '[.findings[] | select(.rule == "extra-head"
    and .kind == "RayCluster" and .namespace == $n and .name == $c and (.message | contains("\"" + $e + "\"")))] | length' \
    "$work/audit.out" 2>/dev/null)"
  [ "$forbidden_rc" = 2 ] && grep -q 'answered 403: rayclusters.ray.io is forbidden' <<<"$forbidden_err" \
    || why="$why without the overlay: exit $forbidden_rc, $forbidden_err;"
  [ "$before_rc" != 2 ] && [ "$before_extra" = 0 ] || why="$why before the extra head: exit $before_rc, extra-head findings $before_extra ($(head -c 300 "$work/audit.err"));"
  [ "$audit_rc" = 1 ] && [ "$found" = 1 ] || why="$why with the extra head: exit $audit_rc, findings for $cluster: $found ($(head -c 300 "$work/audit.err"));"
  audit_live --namespace "$ns"
  grep -q "^extra-head  *RayCluster  *$ns  *$cluster  *-$" "$work/audit.out" || why="$why the table has no extra-head row;"
  show "ray-webhook audit --namespace $ns" "$(grep -A3 '^extra-head' "$work/audit.out"; tail -1 "$work/audit.out")"
  # kube-apiserver's audit log (tests/e2e/manifests/audit-policy.yaml) holds the webhook's Pod lists:
  # the audit's is cluster-wide, paged, with the Ray Pod selector.
  jq -e -s 'any(.[]; .verb == "list" and .objectRef.resource == "pods" and .responseStatus.code == 200
      and .user.username == "system:serviceaccount:ray-webhook-system:ray-webhook"
      and (.requestURI | startswith("/api/v1/pods?limit=500&labelSelector=ray.io%2Fnode-type%20in%20%28head%2Cworker%29%2Cray.io%2Fcluster")))' \
    "$logs/audit.log" >/dev/null 2>&1 || why="$why kube-apiserver's audit log shows no paged cluster-wide list of Ray Pods by the webhook's ServiceAccount;"
  [ -z "$why" ] && pass "$s23e" || fail "$s23e" "$why"

  # 23f: a replica of its own (not in the EndpointSlice) with the periodic audit.
  why=""
  port=$(free_port) && probe=$(free_port) || die "no free port"
  rw_name=ray-webhook-audit rw_ip="$webhook_ip2" rw_port=$port rw_probe=$probe rw_args="--audit-interval=1s" start_ray_webhook
  audit_gauge() {
    curl -fsS --cacert "$webhook_certs/ca.crt" --resolve "ray-webhook.ray-webhook-system.svc:$port:$webhook_ip2" \
      "https://ray-webhook.ray-webhook-system.svc:$port/metrics" | awk '$1 == "ray_webhook_rayclusters_with_extra_heads" {print $2}'
  }
  gauge_at_least() { local v; v="$(audit_gauge)"; [ -n "$v" ] && [ "$v" -ge "$1" ]; }
  wait_until 30 "the audit gauge" gauge_at_least 1 && n1="$(audit_gauge)"
  kc -n "$ns" delete pod "$extra" --grace-period=0 --force >>"$logs/audit-extra-head.log" 2>&1
  gauge_below() { local v; v="$(audit_gauge)"; [ -n "$v" ] && [ "$v" -lt "$1" ]; }
  [ -n "$n1" ] && wait_until 30 "the audit gauge to drop" gauge_below "$n1" && n2="$(audit_gauge)"
  [ -n "$n1" ] && [ -n "$n2" ] && [ "$n2" = $((n1 - 1)) ] || why="gauge with the extra head: ${n1:-none}, after deleting it: ${n2:-none};"
  grep -q 'info audit pods=' "$logs/ray-webhook-audit.log" || why="$why no audit line in logs/ray-webhook-audit.log;"
  show "ray-webhook-audit" "ray_webhook_rayclusters_with_extra_heads ${n1:-?} -> ${n2:-?}; $(grep -m1 'info audit pods=' "$logs/ray-webhook-audit.log" | cut -d' ' -f2-)"
  [ -z "$why" ] && pass "$s23f" || fail "$s23f" "$why"
  kill -TERM "${pids[ray-webhook-audit]}" 2>/dev/null

  # The suite goes on with the base's RBAC.
  jq '.items[] | select(.kind == "ClusterRole")' "$work/rendered-static-certs.json" | kc apply -f - >>"$logs/audit-rbac.log" 2>&1
}
