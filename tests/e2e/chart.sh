# shellcheck shell=bash
# Checks 25a to 25c of scripts/e2e.sh: charts/ray-webhook, rendered by the Helm
# built in .bin/helm, offline and on the suite's kube-apiserver. Sourced by
# scripts/e2e.sh after check 1 (it uses kc, pass, fail, start_ray_webhook, ...)
# and leaves things as check 1 left them: deploy/'s webhook configurations, and
# ray-webhook serving with deploy/'s arguments.

chart_helm() { # chart_helm ARGS...: the suite's Helm, its own files under the work directory
  HELM_CACHE_HOME="$work/helm-home/cache" HELM_CONFIG_HOME="$work/helm-home/config" \
    HELM_DATA_HOME="$work/helm-home/data" KUBECONFIG="$work/kubeconfig" "$bin/helm" "$@"
}

# chart_render OUT ARGS...: release ray-webhook in ray-webhook-system, as
# deploy/ names it, for this API server's version; YAML in OUT.yaml, the
# objects as a kubectl List in OUT.json.
chart_render() {
  local out="$1"
  shift
  chart_helm template ray-webhook "$repo/charts/ray-webhook" --namespace ray-webhook-system \
    --kube-version "$chart_kube_version" "$@" >"$out.yaml" 2>"$out.stderr" || return 1
  kc create --dry-run=client -o json -f "$out.yaml" 2>>"$out.stderr" \
    | jq -s '{apiVersion: "v1", kind: "List", items: [.[] | if .kind == "List" then .items[] else . end]}' >"$out.json"
}

chart_pod() { # chart_pod NAME LABELS_JSON: a Pod shaped like a KubeRay worker of rc-chart, on stdin of kubectl
  jq -n --arg n "$1" --argjson labels "$2" '{apiVersion: "v1", kind: "Pod", metadata: {name: $n, labels: $labels},
    spec: {containers: [{name: "ray-worker", image: "rayproject/ray:2.9.0", command: ["/bin/bash", "-c", "--"],
      args: ["ray start --address=rc-chart-head-svc:6379 --block"]}]}}'
}

chart_checks() {
  local ns=e2e-chart out why ok f k got
  local ray='{"ray.io/node-type": "worker", "ray.io/cluster": "rc-chart", "ray.io/group": "small"}'
  # What the objectSelector lets through but the server does not count as a
  # Ray Pod: no ray.io/cluster, or an empty one.
  local no_cluster='{"ray.io/node-type": "worker"}'
  local empty_cluster='{"ray.io/node-type": "worker", "ray.io/cluster": ""}'
  local s25a="25a charts/ray-webhook offline: helm lint, the defaults = deploy/overlays/cert-manager field by field (drift caught), variants, values"
  local s25b="25b charts/ray-webhook on the API server: three renderings pass apply --dry-run=server; applied, a worker created through it is mutated by the server it configures; with matchConditions (CEL) a Pod without ray.io/cluster is never sent"
  local s25c="25c helm install and upgrade on the API server (self-signed): the release installs with --create-namespace, and an upgrade keeps the serving pair and the caBundle"
  if [ ! -x "$bin/helm" ]; then
    fail "$s25a" "no $bin/helm (see $bin/helm.build.log)"
    fail "$s25b" "no $bin/helm"
    fail "$s25c" "no $bin/helm"
    return
  fi
  chart_kube_version="$(kc version -o json 2>/dev/null | jq -r .serverVersion.gitVersion)"

  # ---- 25a. the offline checks (tests/deploy/helm_chart.sh), with this suite's kubectl and server
  if bash "$repo/tests/deploy/helm_chart.sh" --helm "$bin/helm" --kubectl "$bin/kubectl" --server "$ray_webhook" \
    >"$logs/helm-chart.log" 2>&1; then
    pass "$s25a"
  else
    fail "$s25a" "$(grep '^FAIL' "$logs/helm-chart.log" | head -5 | cut -c1-300) (logs/helm-chart.log)"
  fi
  printf '     tests/deploy/helm_chart.sh: %s\n' "$(tail -1 "$logs/helm-chart.log")"

  # ---- 25b. rendered and applied
  ok=1
  why=""
  # The three certificate sources, as a server-side dry run (cert-manager's CRDs are installed).
  local ca_b64
  ca_b64="$(base64 -w0 <"$webhook_certs/ca.crt")"
  for f in "cert-manager|" "self-signed|--set certificates.source=self-signed" \
    "secret|--set certificates.source=secret --set certificates.caBundle=$ca_b64 --set webhooks.matchConditions.enabled=true"; do
    local name="${f%%|*}" args=()
    read -r -a args <<<"${f#*|}"
    if ! chart_render "$work/chart-$name" --set namespace.create=true "${args[@]}"; then
      ok=0; why="helm template ($name): $(head -c 300 "$work/chart-$name.stderr")"; continue
    fi
    kc apply --dry-run=server -f "$work/chart-$name.yaml" >"$logs/chart-dry-run-$name.log" 2>&1 \
      || { ok=0; why="apply --dry-run=server ($name): $(grep -v '^Warning' "$logs/chart-dry-run-$name.log" | tail -2 | tr '\n' ' ')"; }
  done
  # For real: the suite's throw-away CA as caBundle (the Secret the server reads
  # is the folder the suite mounts), the port it listens on, and a cluster
  # domain of its own, so the mutation shows that the chart's Deployment
  # configured the server.
  local domain=chart.example.internal
  local live=(--set namespace.create=true --set certificates.source=secret
    --set "certificates.caBundle=$ca_b64" --set "containerPort=$webhook_port" --set clusterDomain="$domain")
  chart_render "$work/chart-live" "${live[@]}" || { ok=0; why="helm template (live): $(head -c 300 "$work/chart-live.stderr")"; }
  chart_render "$work/chart-live-cel" "${live[@]}" --set webhooks.matchConditions.enabled=true \
    || { ok=0; why="helm template (matchConditions): $(head -c 300 "$work/chart-live-cel.stderr")"; }
  kc delete mutatingwebhookconfiguration ray-webhook >/dev/null 2>&1
  kc delete validatingwebhookconfiguration ray-webhook >/dev/null 2>&1
  kc apply -f "$work/chart-live.yaml" >"$logs/chart-apply.log" 2>&1 \
    || { ok=0; why="apply: $(grep -v '^Warning' "$logs/chart-apply.log" | tail -2 | tr '\n' ' ')"; }
  for k in mutatingwebhookconfiguration validatingwebhookconfiguration; do
    got="$(kc get "$k" ray-webhook -o json 2>/dev/null)"
    [ "$(jq -r '.metadata.labels["helm.sh/chart"] // ""' <<<"$got")" = "ray-webhook-0.1.0" ] \
      && [ "$(jq -r '[.webhooks[].clientConfig.caBundle] | unique | join(",")' <<<"$got")" = "$ca_b64" ] \
      || { ok=0; why="$k ray-webhook is not the chart's, with the throw-away CA"; }
  done
  for k in deployment/ray-webhook poddisruptionbudget/ray-webhook serviceaccount/ray-webhook service/ray-webhook; do
    kc -n ray-webhook-system get "$k" >/dev/null 2>&1 || { ok=0; why="$k not stored"; }
  done
  # The server as the chart's Deployment runs it.
  stop_pid ray-webhook
  start_ray_webhook "$work/chart-live.json"
  ensure_namespace "$ns"
  mutated() { # mutated POD: FQ_RAY_IP and the --address of the stored Pod use $domain
    kc -n "$ns" get pod "$1" -o json 2>/dev/null | jq -e --arg f "rc-chart-head-svc.$ns.svc.$domain" '
      ([.spec.containers[0].env[]? | select(.name == "FQ_RAY_IP" and .value == $f)] | length) == 1
      and (.spec.containers[0].args | join(" ") | contains("--address=" + $f + ":6379"))' >/dev/null
  }
  sent() { webhook_log_count "pod=$1 "; }
  # (a) without matchConditions: the worker is mutated; a Pod without ray.io/cluster is still sent.
  chart_pod chart-worker-a "$ray" | kc -n "$ns" create -f - >"$logs/chart-pods.log" 2>&1
  chart_pod chart-no-cluster-a "$no_cluster" | kc -n "$ns" create -f - >>"$logs/chart-pods.log" 2>&1
  mutated chart-worker-a || { ok=0; why="chart-worker-a is not mutated with FQ_RAY_IP=rc-chart-head-svc.$ns.svc.$domain"; }
  webhook_log_grows "pod=chart-no-cluster-a " 0 || { ok=0; why="without matchConditions, chart-no-cluster-a was not sent (the control case)"; }
  # (b) with matchConditions: the API server evaluates the CEL; the worker is
  # still mutated, the two others are stored without a call (the worker after
  # them shows the log has caught up).
  kc apply -f "$work/chart-live-cel.yaml" >>"$logs/chart-apply.log" 2>&1 \
    || { ok=0; why="apply with matchConditions: $(grep -v '^Warning' "$logs/chart-apply.log" | tail -2 | tr '\n' ' ')"; }
  # By entry name: the CEL reads Pod labels, so only the two Ray Pod entries carry it (not
  # validate-all-pods, nor validate.rayclusters, whose objects are RayClusters, RayJobs and RayServices).
  conditions() { kc get "$1" ray-webhook -o json | jq -r '[.webhooks[] | "\(.name)=\(.matchConditions // [] | length)"] | join(" ")'; }
  [ "$(conditions mutatingwebhookconfiguration)" = "mutate.pods.ray-webhook.io=1" ] \
    && [ "$(conditions validatingwebhookconfiguration)" = "validate.pods.ray-webhook.io=1 validate-all-pods.ray-webhook.io=0 validate.rayclusters.ray-webhook.io=0" ] \
    || { ok=0; why="matchConditions not stored on the two Ray Pod entries alone: $(conditions mutatingwebhookconfiguration) $(conditions validatingwebhookconfiguration)"; }
  sleep 1  # the API server's webhook informer
  chart_pod chart-no-cluster-b "$no_cluster" | kc -n "$ns" create -f - >>"$logs/chart-pods.log" 2>&1
  chart_pod chart-empty-cluster-b "$empty_cluster" | kc -n "$ns" create -f - >>"$logs/chart-pods.log" 2>&1
  local before
  before="$(sent chart-worker-b)"
  chart_pod chart-worker-b "$ray" | kc -n "$ns" create -f - >>"$logs/chart-pods.log" 2>&1
  webhook_log_grows "pod=chart-worker-b " "$before" 2 || { ok=0; why="chart-worker-b: no review logged"; }
  mutated chart-worker-b || { ok=0; why="with matchConditions, chart-worker-b is not mutated"; }
  for f in chart-no-cluster-b chart-empty-cluster-b; do
    kc -n "$ns" get pod "$f" >/dev/null 2>&1 || { ok=0; why="$f not stored"; }
    [ "$(sent "$f")" = 0 ] || { ok=0; why="with matchConditions, $f was sent to ray-webhook"; }
  done
  # (c) with matchConditions and the server stopped: the worker is refused
  # (failurePolicy Fail), the Pod without ray.io/cluster is created, so it was never sent.
  stop_pid ray-webhook
  out="$(chart_pod chart-worker-c "$ray" | kc -n "$ns" create -f - 2>&1)"
  grep -q 'failed calling webhook' <<<"$out" || { ok=0; why="chart-worker-c with the server stopped: $out"; }
  chart_pod chart-no-cluster-c "$no_cluster" | kc -n "$ns" create -f - >>"$logs/chart-pods.log" 2>&1 \
    || { ok=0; why="with the server stopped, chart-no-cluster-c was refused: $(tail -1 "$logs/chart-pods.log")"; }
  # Back to check 1's state: deploy/'s webhook configurations, no Deployment or
  # PodDisruptionBudget, ray-webhook with deploy/'s arguments.
  kc delete mutatingwebhookconfiguration ray-webhook >/dev/null 2>&1
  kc delete validatingwebhookconfiguration ray-webhook >/dev/null 2>&1
  kc -n ray-webhook-system delete deployment/ray-webhook poddisruptionbudget/ray-webhook >/dev/null 2>&1
  jq '{apiVersion: "v1", kind: "List", items: [.items[] | select(.kind | test("WebhookConfiguration$"))]}' \
    "$work/rendered-static-certs.json" | kc apply -f - >"$logs/apply-webhooks-again.log" 2>&1 \
    || die "re-applying deploy/'s webhook configurations failed (logs/apply-webhooks-again.log)"
  start_ray_webhook
  if [ "$ok" = 1 ]; then pass "$s25b"; else fail "$s25b" "$why"; fi
  printf '     stored worker: FQ_RAY_IP=%s; reviews of the Pods without ray.io/cluster: %s without matchConditions, %s with\n' \
    "$(kc -n "$ns" get pod chart-worker-b -o json 2>/dev/null | jq -r '.spec.containers[0].env[]? | select(.name == "FQ_RAY_IP") | .value')" \
    "$(sent chart-no-cluster-a)" "$(( $(sent chart-no-cluster-b) + $(sent chart-empty-cluster-b) ))"

  # ---- 25c. helm install and upgrade (self-signed): the pair is made once and
  # kept (the chart looks the Secret up). Its webhooks call a Service without
  # endpoints, so they are set to Ignore and the release is removed at once.
  ok=1
  why=""
  local rel=rw-helm hns=e2e-helm secret="rw-helm-ray-webhook-serving-cert"
  local hargs=(--namespace "$hns" --set certificates.source=self-signed
    --set webhooks.mutate.failurePolicy=Ignore --set webhooks.validate.failurePolicy=Ignore)
  if chart_helm install "$rel" "$repo/charts/ray-webhook" --create-namespace "${hargs[@]}" >"$logs/helm-install.log" 2>&1; then
    local crt1 ca1 crt2 ca2
    crt1="$(kc -n "$hns" get secret "$secret" -o jsonpath='{.data.tls\.crt}' 2>/dev/null)"
    ca1="$(kc get validatingwebhookconfiguration rw-helm-ray-webhook -o json 2>/dev/null | jq -r '[.webhooks[].clientConfig.caBundle] | unique | join(",")')"
    [ -n "$crt1" ] && [ "$ca1" = "$(kc -n "$hns" get secret "$secret" -o jsonpath='{.data.ca\.crt}')" ] \
      || { ok=0; why="after install: no Secret $secret, or a caBundle that is not its ca.crt"; }
    if chart_helm upgrade "$rel" "$repo/charts/ray-webhook" "${hargs[@]}" --set replicas=3 >>"$logs/helm-install.log" 2>&1; then
      crt2="$(kc -n "$hns" get secret "$secret" -o jsonpath='{.data.tls\.crt}' 2>/dev/null)"
      ca2="$(kc get validatingwebhookconfiguration rw-helm-ray-webhook -o json 2>/dev/null | jq -r '[.webhooks[].clientConfig.caBundle] | unique | join(",")')"
      [ "$crt2" = "$crt1" ] && [ "$ca2" = "$ca1" ] || { ok=0; why="helm upgrade made a new pair or caBundle"; }
      [ "$(kc -n "$hns" get deployment rw-helm-ray-webhook -o jsonpath='{.spec.replicas}')" = 3 ] \
        || { ok=0; why="helm upgrade did not apply replicas=3"; }
    else
      ok=0; why="helm upgrade: $(tail -3 "$logs/helm-install.log" | tr '\n' ' ')"
    fi
  else
    ok=0; why="helm install: $(tail -3 "$logs/helm-install.log" | tr '\n' ' ')"
  fi
  chart_helm uninstall "$rel" --namespace "$hns" >>"$logs/helm-install.log" 2>&1 || { ok=0; why="helm uninstall failed"; }
  kc get validatingwebhookconfiguration rw-helm-ray-webhook >/dev/null 2>&1 && { ok=0; why="the release's webhooks remain after uninstall"; }
  if [ "$ok" = 1 ]; then pass "$s25c"; else fail "$s25c" "$why"; fi
}
