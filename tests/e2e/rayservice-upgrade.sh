# Check 22c of scripts/e2e.sh, sourced by it: a RayService whose name has 40
# characters is upgraded to completion by a real KubeRay operator on the real
# parts of the cluster (kube-scheduler, kube-controller-manager, KWOK's node
# and Pod lifecycle, CoreDNS), with cmd/ray-standin answering as the Ray
# processes of its Pods (tests/e2e/README.md, "22c"). Uses e2e.sh's kc, pids,
# stop_pid, start_operator, install_crds, remove_crds, ensure_namespace,
# wait_until, pods_of, pass, fail, log and its variables, among them
# $pod_cidr (KWOK's Pod IPs, a local route here), $dns_ip (CoreDNS) and
# $cluster_dns (the directory of a resolv.conf naming CoreDNS).
#
#   upgrade_to_completion RELEASE NAMESPACE   the check on the running RELEASE
#   upgrade_other_releases CURRENT            the check on every other 1.x release
#                                             (OPTIONAL ones with E2E_ALL_RELEASES=1),
#                                             CURRENT stopped meanwhile

upgrade_rs=rayservice-upgraded-to-completion-40char # 40 characters

# The head name ray-webhook's rule gives a cluster (README.md, "Deterministic
# name"): the name lowercased plus -head up to 50 characters; a longer one:
# its first 49 (less a trailing - or .), -, the low 32 bits of its FNV-1a
# (64 bits) in hex, -head. Written from the README, not from the server.
ray_webhook_head() {
  local c h=-3750763034362895579 i ch p # h: FNV-1a's offset basis 14695981039346656037 as a signed 64-bit number
  c="$(tr 'A-Z' 'a-z' <<<"$1")"
  if [ "${#c}" -le 50 ]; then printf '%s-head' "$c"; return; fi
  for ((i = 0; i < ${#c}; i++)); do printf -v ch '%d' "'${c:i:1}"; h=$(((h ^ ch) * 1099511628211)); done
  p="${c:0:49}"
  while [[ "$p" == *- || "$p" == *. ]]; do p="${p%?}"; done
  printf '%s-%08x-head' "$p" $((h & 0xffffffff))
}

# Toleration of the KWOK node's taint: only Pods that carry it are scheduled
# and run (the other checks' Pods stay Pending).
kwok_toleration='{key: e2e.ray-webhook.io/kwok, operator: Exists, effect: NoSchedule}'

# The Ray stand-in that e2e.sh runs for every namespace (start_ray_standin).
standin_running() { [ -n "${pids[ray-standin]:-}" ] && kill -0 "${pids[ray-standin]}" 2>/dev/null; }

# Every 0.5 s until stopped: one JSON line per poll with the time and the live
# heads (not being deleted, not Failed or Succeeded) of NAMESPACE (curl, not
# kubectl: it starts in milliseconds).
poll_live_heads() { # poll_live_heads NAMESPACE OUT
  while :; do
    curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
      "https://127.0.0.1:$apiserver_port/api/v1/namespaces/$1/pods?labelSelector=ray.io%2Fnode-type%3Dhead" 2>/dev/null \
      | jq -c --arg t "$(date -u +%T.%N | cut -c1-12)" \
      '{t: $t, heads: [.items[] | select(.metadata.deletionTimestamp == null and .status.phase != "Succeeded" and .status.phase != "Failed")
        | {c: .metadata.labels["ray.io/cluster"], n: .metadata.name}]}' >>"$2"
    sleep 0.5
  done
}

upgrade_to_completion() { # upgrade_to_completion RELEASE NAMESPACE
  local release="$1" ns="$2" rs="$upgrade_rs" why="" c1="" c2="" polls="$work/heads-$2.jsonl" t0=$SECONDS
  local s22c="22c KubeRay $release: RayService (${#upgrade_rs} characters) upgraded to completion on real scheduler, controllers, KWOK and CoreDNS with the Ray stand-in: the new cluster active and serving, the old RayCluster deleted; every head stored under ray-webhook's name, never two live heads of one cluster"
  standin_running || { fail "$s22c" "the Ray stand-in is not running (logs/ray-standin.log)"; return; }
  ensure_namespace "$ns"
  # The operator (again), reaching the dashboards by their head Service names through CoreDNS.
  stop_pid kuberay
  operator_exec=with_cluster_dns start_operator "$release" || { fail "$s22c" "the operator did not start again"; return; }
  : >"$polls"
  poll_live_heads "$ns" "$polls" &
  pids[poll-heads]=$!
  local t_poll=$SECONDS

  # "active|pending|Ready condition" of the RayService
  rs_state() {
    kc -n "$ns" get rayservice.ray.io "$rs" -o jsonpath='{.status.activeServiceStatus.rayClusterName}|{.status.pendingServiceStatus.rayClusterName}|{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null
  }
  serving() { # serving CLUSTER: active, nothing pending, Ready, and the serve Service selects it
    local a p r
    IFS='|' read -r a p r <<<"$(rs_state)"
    [ "$a" = "$1" ] && [ -z "$p" ] && [ "$r" = True ] || return 1
    [ "$(kc -n "$ns" get service "$rs-serve-svc" -o jsonpath='{.spec.selector.ray\.io/cluster}' 2>/dev/null)" = "$1" ]
  }
  first_serving() { c1="$(rs_state | cut -d'|' -f1)"; [ -n "$c1" ] && serving "$c1"; }
  new_pending() { c2="$(rs_state | cut -d'|' -f2)"; [ -n "$c2" ] && [ "$c2" != "$c1" ]; }
  head_service() { kc -n "$ns" get raycluster.ray.io "$1" -o jsonpath='{.status.head.serviceName}' 2>/dev/null; }
  # The heads of CLUSTER listed live at some poll (its Pods go with it: garbage collector).
  seen_heads() { [ -n "$1" ] && jq -r --arg c "$1" '.heads[] | select(.c == $c) | .n' "$polls" | LC_ALL=C sort -u | paste -sd, -; }
  # The head a Service name reaches through CoreDNS: the session_name of the dashboard answering there.
  reached_head() { (with_cluster_dns curl -fsS --max-time 5 "http://$1.$ns.svc.${cluster_domain:-cluster.local}:8265/api/version") 2>/dev/null | jq -r .session_name 2>/dev/null; }
  gone() { [[ "$(kc -n "$ns" get raycluster.ray.io "$1" -o name 2>&1)" == *NotFound* ]]; }

  kc -n "$ns" apply -f - >"$logs/rayservice-$ns.log" 2>&1 <<EOF
apiVersion: ray.io/v1
kind: RayService
metadata: {name: $rs}
spec:
  serveConfigV2: |
    applications:
    - name: echo
      import_path: echo:app
      route_prefix: /
      deployments:
      - name: Echo
        num_replicas: 1
  rayClusterConfig:
    rayVersion: "2.52.0"
    headGroupSpec:
      rayStartParams: {}
      template: {spec: {tolerations: [$kwok_toleration], containers: [{name: ray-head, image: "rayproject/ray:2.52.0",
        resources: {requests: {cpu: "1", memory: 2G}, limits: {cpu: "1", memory: 2G}}}]}}
    workerGroupSpecs:
    - {groupName: workers, replicas: 1, minReplicas: 0, maxReplicas: 2, rayStartParams: {},
       template: {spec: {tolerations: [$kwok_toleration], containers: [{name: ray-worker, image: "rayproject/ray:2.52.0",
         resources: {requests: {cpu: "1", memory: 1G}, limits: {cpu: "1", memory: 1G}}}]}}}
EOF
  # (1) The first cluster becomes active and serving: head scheduled and Ready
  # (KWOK), Serve applications RUNNING on its dashboard (ray-standin), serve
  # Service endpoints (the EndpointSlice controller).
  local t_ready=- svc1 owner1
  wait_until 120 "RayService $rs serving from its first cluster" first_serving && t_ready=$((SECONDS - t0)) \
    || why="$why the first cluster never served ($(rs_state));"
  svc1="$(head_service "$c1")"
  owner1="$(kc -n "$ns" get raycluster.ray.io "$c1" -o jsonpath='{.metadata.ownerReferences[0].kind}' 2>/dev/null)"
  # (2) The upgrade: a head rayStartParams entry changes the cluster hash.
  if [ -z "$why" ]; then
    kc -n "$ns" patch rayservice.ray.io "$rs" --type=merge \
      -p '{"spec":{"rayClusterConfig":{"headGroupSpec":{"rayStartParams":{"num-cpus":"0"}}}}}' >>"$logs/rayservice-$ns.log" 2>&1
    wait_until 60 "a new pending cluster of $rs" new_pending || why="$why no new cluster after the spec change ($(rs_state));"
  fi
  # (3) The new cluster active and serving, (4) the old RayCluster deleted
  # (60 s after the switch: RayClusterDeletionDelayDuration), its Pods then
  # by the garbage collector.
  local t_switched=- t_deleted=-
  [ -n "$why" ] || wait_until 120 "$c2 active and serving" serving "$c2" || why="$why the new cluster never became active and serving ($(rs_state));"
  [ -n "$why" ] || t_switched=$((SECONDS - t0))
  [ -n "$why" ] || wait_until 90 "RayCluster $c1 deleted" gone "$c1" || why="$why the old RayCluster $c1 was not deleted;"
  [ -n "$why" ] || t_deleted=$((SECONDS - t0))
  sleep 2
  stop_pid poll-heads
  t_poll=$((SECONDS - t_poll))

  # Every head the operator created was stored (its events; a stored head: one
  # listed at a poll or stored now, since the old cluster's go), none refused.
  sleep 1
  local events created refused stored
  events="$(kc -n "$ns" get events -o json 2>/dev/null)"
  created="$(jq -r '[.items[] | select(.reason == "CreatedHeadPod") | .message | sub("^Created head Pod [^/]*/"; "")] | unique | join(" ")' <<<"$events")"
  refused="$(jq -r '[.items[] | select(.reason == "FailedToCreateHeadPod" or .reason == "FailedCreateHeadPod") | .message] | join(" | ")' <<<"$events")"
  stored="$( (jq -r '.heads[].n' "$polls"; kc -n "$ns" get pods -l ray.io/node-type=head -o json | jq -r '.items[].metadata.name') \
    | LC_ALL=C sort -u | paste -sd' ' -)"
  [ -z "$refused" ] || why="$why head creation refused: $refused;"
  [ "$created" = "$stored" ] || why="$why heads created (events) [$created], stored [$stored];"
  local already
  already="$(grep -E 'pods \\"[^\\]*\\" already exists' "$logs/operator-$release.log" | grep -c -- "${rs:0:30}" | tr -d ' ')"
  [ "$already" = 0 ] || why="$why the operator logged $already 'already exists' errors for $rs's Pods;"
  # Exactly one head per cluster, named by ray-webhook's rule, at every poll.
  local n_polls two wrong c h k svc owner
  n_polls="$(wc -l <"$polls" | tr -d ' ')"
  two="$(jq -r '.t as $t | .heads | group_by(.c) | map(select(length > 1))[] | "\($t) \(.[0].c): \([.[].n] | join(","))"' "$polls" | head -3 | paste -sd ';' -)"
  [ -z "$two" ] || why="$why two live heads of one cluster at a poll: $two;"
  [ "$n_polls" -gt 0 ] || why="$why the heads were never listed;"
  wrong=""
  while read -r c h; do
    [ "$h" = "$(ray_webhook_head "$c")" ] || wrong="$wrong $c: $h (ray-webhook's rule: $(ray_webhook_head "$c"));"
  done < <(jq -r '.heads[] | "\(.c) \(.n)"' "$polls" | sort -u)
  [ -z "$wrong" ] || why="$why heads not named by ray-webhook's rule:$wrong"
  local svc2 owner2
  svc2="$(head_service "$c2")"
  owner2="$(kc -n "$ns" get raycluster.ray.io "$c2" -o jsonpath='{.metadata.ownerReferences[0].kind}' 2>/dev/null)"
  for k in "$c1=$svc1=$owner1" "$c2=$svc2=$owner2"; do
    IFS='=' read -r c svc owner <<<"$k"
    [ -n "$c" ] || continue
    h="$(seen_heads "$c")"
    [ "$h" = "$(ray_webhook_head "$c")" ] || why="$why cluster $c: heads [$h];"
    [ "$owner" = RayService ] || why="$why RayCluster $c owner kind '$owner';"
    # The operator found the dashboard by the head Service's name (CoreDNS: the
    # head Pod's IP) and deployed the application to that head.
    grep -F "dashboard $ns/$h PUT /api/serve/applications/ " "$logs/ray-standin.log" | grep -qF "applications deployed: echo:Echo" \
      || why="$why no Serve application deployed to $c's head $h (head Service $svc, logs/ray-standin.log);"
  done
  # At the end the new cluster has its one head, which both its head Service's
  # name and the RayService's reach (CoreDNS, the head's dashboard).
  local reached="" reached_rs=""
  if [ -n "$c2" ]; then
    h="$(head_names "$ns" "$c2")"
    [ "$h" = "$(ray_webhook_head "$c2")" ] || why="$why cluster $c2 at the end: heads [$h];"
    reached="$(reached_head "$svc2")"
    reached_rs="$(reached_head "$rs-head-svc")"
    [ "$reached" = "$ns/$h" ] && [ "$reached_rs" = "$ns/$h" ] \
      || why="$why through CoreDNS $svc2 reaches [$reached], $rs-head-svc [$reached_rs], not $ns/$h;"
  fi
  [ -z "$c1" ] || [ "${#c1}" -le 63 ] || why="$why cluster name $c1 too long;"
  if [ -z "$why" ]; then pass "$s22c"; else fail "$s22c" "$why"; fi
  local kr1="" kr2=""
  [ -n "$c1" ] && kr1="$(tr 'A-Z' 'a-z' <<<"${c1:0:50}")-head"
  [ -n "$c2" ] && kr2="$(tr 'A-Z' 'a-z' <<<"${c2:0:50}")-head"
  printf '     old cluster %s (%s characters): head %s (KubeRay would name it %s)\n' "$c1" "${#c1}" "$(seen_heads "$c1")" "$kr1"
  printf '     new cluster %s: head %s (KubeRay would name it %s%s)\n' "$c2" "$(seen_heads "$c2")" "$kr2" \
    "$([ -n "$kr1" ] && [ "$kr1" = "$kr2" ] && echo ", the same as the old one's")"
  local left=""
  [ -z "$c1" ] || left="$(kc -n "$ns" get pods -l "ray.io/cluster=$c1" -o jsonpath='{range .items[*]}{.metadata.name}={.status.phase} {end}' 2>/dev/null)"
  printf '     serving at %s s, switched to the new cluster at %s s, old RayCluster deleted at %s s; its Pods left (garbage collector): %s\n' \
    "$t_ready" "$t_switched" "$t_deleted" "${left:-none}"
  printf '     through CoreDNS: %s reaches %s, %s-head-svc %s (GET /api/version, session_name)\n' "$svc2" "${reached:--}" "$rs" "${reached_rs:--}"
  printf '     live heads listed at %s polls in %s s, two of one cluster: %s; heads created (events): %s\n' "$n_polls" "$t_poll" "${two:-never}" "$created"
}

head_names() { [ -n "$2" ] && pods_of "$1" "$2" head | jq -r '[.items[].metadata.name] | join(",")'; }

# The check on every other built 1.x release: CURRENT and its CRDs (with their
# custom resources) are removed first, as between v0.3.0 and CURRENT, since
# both releases' CRDs are the same ray.io/v1 kinds; CURRENT comes back after.
upgrade_other_releases() { # upgrade_other_releases CURRENT
  local current="$1" r ran=0
  for r in $(operator_releases | grep -v 'v0\.' | grep -vx "$current"); do
    [ -x "$bin/$r" ] || { fail "22c KubeRay $r" "not built ($bin/$r.build.log)"; continue; }
    ran=1
    stop_pid kuberay
    [ -n "$current" ] && remove_crds "$current"
    if install_crds "$r"; then
      upgrade_to_completion "$r" "e2e-upgrade-$(tr . - <<<"${r#kuberay-v}")"
    else
      fail "22c KubeRay $r" "its CRDs did not install (logs/crds-$r.log)"
    fi
    stop_pid kuberay
    remove_crds "$r"
  done
  for r in "$e2e"/kuberay-v1.*/OPTIONAL; do
    [ -f "$r" ] && [ "${E2E_ALL_RELEASES:-0}" != 1 ] || continue
    r="$(basename "$(dirname "$r")")"
    skip "22c KubeRay $r" "not in the default run (tests/e2e/$r/OPTIONAL: a long cold build); E2E_ALL_RELEASES=1 runs it"
  done
  if [ "$ran" = 1 ] && [ -n "$current" ] && [ -x "$bin/$current" ]; then
    install_crds "$current" && start_operator "$current" || log "the current operator $current did not start again"
  fi
}
