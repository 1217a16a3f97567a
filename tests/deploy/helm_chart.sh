#!/usr/bin/env bash
# Offline checks of charts/ray-webhook with a Helm binary (scripts/e2e.sh builds
# one from Go modules and runs this as one of its checks):
#   tests/deploy/helm_chart.sh --helm tests/e2e/.bin/helm [--kubectl KUBECTL] [--server build/ray-webhook]
# - helm lint --strict, with the defaults and with every variant below;
# - `helm template` with the defaults renders the objects of
#   `kubectl kustomize deploy/overlays/cert-manager`, field by field
#   (compare_chart.mjs), and fails on each of a list of deliberate drifts;
# - every variant passes check_manifests.mjs (the cross-object checks of
#   deploy/) and the OpenAPI schemas (tests/schema);
# - each value lands where it should, and bad values are refused;
# - with --server: every variant's args and env pass the server's flag parser.
# Prints PASS/FAIL per check and "N passed, M failed".
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

helm_bin="${HELM:-}"
kubectl_bin="${KUBECTL:-kubectl}"
server=""
while [ $# -gt 0 ]; do
  case "$1" in
    --helm) helm_bin="$2"; shift 2 ;;
    --kubectl) kubectl_bin="$2"; shift 2 ;;
    --server) server="$2"; shift 2 ;;
    *) echo "helm_chart.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -n "$helm_bin" ] && "$helm_bin" version >/dev/null 2>&1 || { fail "--helm: no usable helm binary (${helm_bin:-none given})"; finish; }
need "$kubectl_bin" "install Debian's kubernetes-client (apt-get install kubernetes-client)"
need node "install nodejs and npm"
need jq "install jq"
deploy_node_modules || { fail "npm ci in tests/deploy failed"; finish; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Helm's own files (repositories, cache) stay in the temp dir.
export HELM_CACHE_HOME="$work/helm-home/cache" HELM_CONFIG_HOME="$work/helm-home/config" HELM_DATA_HOME="$work/helm-home/data"
chart="$repo/charts/ray-webhook"
ns=ray-webhook-system
copy_deploy_tree "$work/tree" || { fail "deploy/overlays/static-certs/generate.sh failed"; finish; }
static="$work/tree/deploy/overlays/static-certs/generated"
ca_b64="$(base64 -w0 <"$static/certs/ca.crt")"
"$kubectl_bin" kustomize "$work/tree/deploy/overlays/cert-manager" >"$work/kustomize.yaml" 2>"$work/kustomize.stderr" \
  || { fail "kubectl kustomize deploy/overlays/cert-manager: $(head -c 500 "$work/kustomize.stderr")"; finish; }
echo "# $("$helm_bin" version --short 2>&1), $("$kubectl_bin" version --client 2>/dev/null | head -1)"

# render OUT [ARGS...]: helm template of release ray-webhook in $ns; the chart
# is $chart_dir when set (a modified copy), stderr in OUT.stderr.
render() {
  local out="$1"; shift
  "$helm_bin" template ray-webhook "${chart_dir:-$chart}" --namespace "$ns" "$@" >"$out" 2>"$out.stderr"
}
# to_json FILE...: each FILE.yaml's documents as a JSON array in FILE.json (one node start for all).
to_json() {
  (cd "$deploy_tests" && node --input-type=module -e '
    import fs from "node:fs"; import YAML from "yaml";
    for (const f of process.argv.slice(1)) {
      const docs = YAML.parseAllDocuments(fs.readFileSync(f, "utf8")).map((d) => d.toJS()).filter((o) => o != null);
      fs.writeFileSync(f.replace(/\.yaml$/, ".json"), JSON.stringify(docs));
    }' "$@")
}

# ---- lint
if out="$("$helm_bin" lint --strict "$chart" 2>&1)"; then
  pass "helm lint --strict charts/ray-webhook: $(grep -c '^\[' <<<"$out") message(s): $(grep '^\[' <<<"$out" | tr '\n' ' ')"
else
  fail "helm lint --strict charts/ray-webhook: $(tail -5 <<<"$out")"
fi

# ---- the defaults against deploy/overlays/cert-manager
if render "$work/default.yaml"; then
  if out="$(node "$deploy_tests/compare_chart.mjs" --without Namespace "$work/kustomize.yaml" "$work/default.yaml")"; then
    pass "helm template with the defaults = kubectl kustomize deploy/overlays/cert-manager, field by field, but the Namespace ($(tail -1 <<<"$out"))"
  else
    fail "the defaults differ from deploy/overlays/cert-manager: $(grep -v '^PASS' <<<"$out" | head -20)"
  fi
else
  fail "helm template with the defaults: $(head -c 1000 "$work/default.yaml.stderr")"
fi
if render "$work/namespace.yaml" --set namespace.create=true \
  && out="$(node "$deploy_tests/compare_chart.mjs" "$work/kustomize.yaml" "$work/namespace.yaml")"; then
  pass "with namespace.create=true: every object of deploy/overlays/cert-manager, the Namespace too ($(tail -1 <<<"$out"))"
else
  fail "namespace.create=true differs from deploy/overlays/cert-manager: $(grep -v '^PASS' <<<"${out:-}" | head -20) $(head -c 500 "$work/namespace.yaml.stderr")"
fi

# ---- the comparison sees drift: each case changes one thing, in a copy of the
# chart or of deploy/, and the comparison must fail naming that field.
# where (chart|deploy) | file | sed script (first match) | text the comparison must print
drifts=(
  "chart|values.yaml|0,/^replicas: 2/s//replicas: 3/|spec.replicas: kustomize 2, chart 3"
  "chart|values.yaml|0,/^drainDelay: 5s/s//drainDelay: 6s/|args[2]: kustomize \"--drain-delay=5s\", chart \"--drain-delay=6s\""
  "chart|values.yaml|0,/    memory: 256Mi/s//    memory: 512Mi/|resources.limits.memory"
  "chart|values.yaml|0,/  timeoutSeconds: 5/s//  timeoutSeconds: 10/|webhooks[0].timeoutSeconds"
  "chart|values.yaml|0,/    failurePolicy: Ignore/s//    failurePolicy: Fail/|webhooks[0].failurePolicy"
  "chart|values.yaml|0,/^  port: 443/s//  port: 8443/|spec.ports[0].port"
  "chart|templates/_helpers.tpl|0,/app.kubernetes.io\/component: admission-webhook/s//app.kubernetes.io\/component: webhook/|spec.selector.matchLabels.app.kubernetes.io/component"
  "chart|templates/_helpers.tpl|0,/^app.kubernetes.io\/part-of: ray-webhook\$/s//app.kubernetes.io\/part-of: ray/|metadata.labels.app.kubernetes.io/part-of"
  "chart|templates/_helpers.tpl|0,/    scope: Namespaced/s//    scope: \"*\"/|rules[0].scope"
  "chart|templates/_helpers.tpl|0,/      operator: In\$/s//      operator: NotIn/|objectSelector.matchExpressions[0].operator: kustomize \"In\", chart \"NotIn\""
  "chart|templates/deployment.yaml|0,/defaultMode: 288/s//defaultMode: 420/|defaultMode: kustomize 288, chart 420"
  "chart|templates/deployment.yaml|0,/enableServiceLinks: false/{/enableServiceLinks: false/d}|spec.template.spec.enableServiceLinks: kustomize false, chart (absent)"
  "chart|templates/certificates.yaml|0,/rotationPolicy: Always/s//rotationPolicy: Never/|spec.privateKey.rotationPolicy"
  "chart|templates/webhooks.yaml|0,/values: \[\"head\", \"worker\"\]/s//values: [\"head\"]/|objectSelector.matchExpressions[0].values[1]"
  "chart|templates/serviceaccount.yaml|\$a---\\napiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: extra\\n  namespace: {{ .Release.Namespace }}|v1 ConfigMap ray-webhook-system/extra: rendered by the chart, not by kustomize"
  "chart|templates/rbac.yaml|0,/verbs: \[\"get\", \"list\"\]/s//verbs: [\"get\", \"list\", \"watch\"]/|rules[0].verbs[2]"
  "deploy|deploy/base/deployment.yaml|0,/- --log-level=info/s//- --log-level=debug/|args[4]: kustomize \"--log-level=debug\", chart \"--log-level=info\""
  "deploy|deploy/overlays/cert-manager/certificates.yaml|0,/renewBefore: 360h/s//renewBefore: 480h/|spec.renewBefore"
  "deploy|deploy/base/webhooks.yaml|0,/reinvocationPolicy: IfNeeded/s//reinvocationPolicy: Never/|reinvocationPolicy"
)
for c in "${drifts[@]}"; do
  IFS='|' read -r where file script expect <<<"$c"
  rm -rf "$work/case"
  mkdir -p "$work/case"
  cp -R "$chart" "$work/case/chart"
  cp -R "$work/tree/deploy" "$work/case/deploy"
  if [ "$where" = chart ]; then target="$work/case/chart/$file"; else target="$work/case/$file"; fi
  cp "$target" "$work/before"
  sed -i -e "$script" "$target"
  if cmp -s "$work/before" "$target"; then fail "drift case did not change $where $file: $script"; continue; fi
  if [ "$where" = deploy ]; then
    "$kubectl_bin" kustomize "$work/case/deploy/overlays/cert-manager" >"$work/case/kustomize.yaml" 2>/dev/null
  else
    cp "$work/kustomize.yaml" "$work/case/kustomize.yaml"
  fi
  if ! chart_dir="$work/case/chart" render "$work/case/chart.yaml"; then
    fail "drift case $where $file ($script) does not render: $(head -c 300 "$work/case/chart.yaml.stderr")"
    continue
  fi
  if out="$(node "$deploy_tests/compare_chart.mjs" --without Namespace "$work/case/kustomize.yaml" "$work/case/chart.yaml")"; then
    fail "drift in $where $file ($script): the comparison still passes"
  elif grep -qF -- "$expect" <<<"$out"; then
    pass "drift in $where $file is caught: $(grep -F -- "$expect" <<<"$out" | head -1 | sed 's/^ *//')"
  else
    fail "drift in $where $file ($script): expected \"$expect\", got: $(grep -v '^PASS' <<<"$out" | head -5)"
  fi
done

# ---- variants: lint, the cross-object checks, the schemas, the server's flag parser.
# name | helm template arguments (split on spaces); namespace.create=true is
# added, as check_manifests.mjs looks at the Namespace too. "secret" variants
# get the static-certs Secret appended, whose CA is $ca_b64.
variants=(
  "defaults|"
  "self-signed|--set certificates.source=self-signed"
  "secret|--set certificates.source=secret --set certificates.caBundle=$ca_b64"
  "port-10250|--set containerPort=10250"
  "port-443|--set containerPort=443 --set probePort=8444"
  "warn-mode|--set rules.headNameMode=warn --set rules.secondHeadMode=warn --set rules.duplicateMountMode=warn --set rules.headLookupFailure=deny --set rules.headUniqueness=name+lookup"
  "cluster-domain|--set clusterDomain=example.internal"
  "match-conditions|--set webhooks.matchConditions.enabled=true --kube-version 1.30.0"
  "settled-workers|--set webhooks.matchConditions.skipSettledWorkers=true --kube-version 1.30.0"
  "host-network|--set hostNetwork=true --set namespace.podSecurity=privileged --set containerPort=10443 --set probePort=10444"
  "extra-args|--set extraArgs={--threads=16,--kube-api-timeout=1s,--busy-poll=0} --set logLevel=warn"
  "other-names|--set fullnameOverride=ray-admission --set webhooks.excludeNamespaces={kube-system,kube-public}"
  "no-opt-in|--set webhooks.validateAllPods.enabled=false --set webhooks.validate.failurePolicy=Ignore"
  "two-calls|--set webhooks.podCalls=two --set webhooks.mutate.failurePolicy=Ignore"
  "audit|--set audit.interval=5m"
  "audit-wgpolicy|--set audit.interval=30m --set audit.reports=wgpolicyk8s.io/v1alpha2"
)
variant_files=()
for v in "${variants[@]}"; do
  IFS='|' read -r name args <<<"$v"
  read -r -a a <<<"$args"
  out_file="$work/variant-$name.yaml"
  if ! render "$out_file" --set namespace.create=true "${a[@]}"; then
    fail "variant $name does not render: $(head -c 500 "$out_file.stderr")"
    continue
  fi
  if out="$("$helm_bin" lint --strict "$chart" --namespace "$ns" --set namespace.create=true "${a[@]}" 2>&1)"; then
    pass "variant $name: helm lint --strict"
  else
    fail "variant $name: helm lint --strict: $(grep -v '^\[INFO' <<<"$out" | tail -4)"
  fi
  case "$name" in secret*) { echo "---"; cat "$static/serving-cert-secret.yaml"; } >>"$out_file" ;; esac
  variant_files+=("$out_file")
done
# check_manifests.mjs scopes its lines by file name: "PASS variant-NAME: ...".
node "$deploy_tests/check_manifests.mjs" --dockerfile "$repo/Dockerfile" "${variant_files[@]}" >"$work/checks.out"
to_json "${variant_files[@]}"
for f in "${variant_files[@]}"; do
  name="$(basename "$f" .yaml)"
  n_pass="$(grep -c "^PASS $name: " "$work/checks.out")"
  if grep -q "^FAIL $name: " "$work/checks.out"; then
    fail "$name: $(grep "^FAIL $name: " "$work/checks.out" | head -5 | tr '\n' ' ')"
  else
    pass "$name: the cross-object checks of deploy/ ($n_pass passed)"
  fi
  [ -n "$server" ] || continue
  if why="$(image_command_parses "$server" "${f%.yaml}.json" "$work/absent")"; then
    pass "$name: the server accepts the container's flags and environment"
  else
    fail "$name: the server refused the container's command line ($why)"
  fi
done
if out="$(bash "$repo/tests/schema/run.sh" "${variant_files[@]}" 2>&1)"; then
  pass "every variant's objects are valid against the Kubernetes and cert-manager schemas ($(tail -1 <<<"$out"))"
else
  fail "schemas: $(grep -v '^PASS' <<<"$out" | head -10)"
fi

# ---- each value lands where it should
# helm template arguments | jq over the rendered objects (an array) that must be true
D='(.[] | select(.kind == "Deployment"))'
C="$D.spec.template.spec.containers[0]"
M='(.[] | select(.kind == "MutatingWebhookConfiguration"))'
V='(.[] | select(.kind == "ValidatingWebhookConfiguration"))'
W="([$M.webhooks[], $V.webhooks[]])"
effects=(
  "--set image.repository=registry.example.com/ray-webhook --set image.tag=1.2.3|$C.image == \"registry.example.com/ray-webhook:1.2.3\""
  "--set image.digest=sha256:$(printf '%064d' 7)|$C.image == \"ray-webhook@sha256:$(printf '%064d' 7)\""
  "--set image.pullPolicy=Always --set imagePullSecrets[0].name=regcred|$C.imagePullPolicy == \"Always\" and $D.spec.template.spec.imagePullSecrets == [{name: \"regcred\"}]"
  "--set replicas=3|$D.spec.replicas == 3"
  "--set resources.limits.memory=512Mi --set resources.requests.cpu=100m|$C.resources == {limits: {cpu: \"500m\", memory: \"512Mi\"}, requests: {cpu: \"100m\", memory: \"32Mi\"}}"
  "--set rules.headUniqueness=lookup|($C.args | index(\"--head-uniqueness=lookup\")) != null"
  "--set rules.headNameMode=warn|($C.args | index(\"--head-name-mode=warn\")) != null"
  "--set rules.secondHeadMode=off|($C.args | index(\"--second-head-mode=off\")) != null"
  "--set rules.headLookupFailure=deny|($C.args | index(\"--head-lookup-failure=deny\")) != null"
  "--set rules.duplicateMountMode=warn|($C.args | index(\"--duplicate-mount-mode=warn\")) != null"
  "|($C.args | map(select(test(\"mode=|uniqueness=|failure=\"))) | length) == 0"
  "--set clusterDomain=example.internal|([$C.env[] | select(.name == \"CLUSTER_DOMAIN\") | .value] == [\"example.internal\"]) and ((.[] | select(.kind == \"Certificate\" and .metadata.name == \"ray-webhook-serving-cert\") | .spec.dnsNames | index(\"ray-webhook.ray-webhook-system.svc.example.internal\")) != null)"
  "--set containerPort=10250|($C.args | index(\"--port=10250\")) != null and $C.ports[0] == {name: \"https\", containerPort: 10250, protocol: \"TCP\"} and ((.[] | select(.kind == \"Service\")).spec.ports[0].targetPort == \"https\") and ($D.spec.template.spec.securityContext.sysctls == null)"
  "--set containerPort=443|$D.spec.template.spec.securityContext.sysctls == [{name: \"net.ipv4.ip_unprivileged_port_start\", value: \"0\"}]"
  "--set probePort=9440|($C.args | index(\"--probe-port=9440\")) != null and $C.ports[1].containerPort == 9440 and $C.readinessProbe.httpGet.port == \"probes\""
  "--set logLevel=debug --set drainDelay=10s --set shutdownGrace=20s --set terminationGracePeriodSeconds=35|($C.args[2:5] == [\"--drain-delay=10s\", \"--shutdown-grace=20s\", \"--log-level=debug\"]) and $D.spec.template.spec.terminationGracePeriodSeconds == 35"
  "--set extraArgs={--threads=16,--kube-api-timeout=1s}|$C.args[-2:] == [\"--threads=16\", \"--kube-api-timeout=1s\"]"
  "--set extraEnv[0].name=TZ --set extraEnv[0].value=UTC|$C.env == [{name: \"CLUSTER_DOMAIN\", value: \"cluster.local\"}, {name: \"TZ\", value: \"UTC\"}]"
  "--set hostNetwork=true --set containerPort=10443 --set probePort=10444|$D.spec.template.spec.hostNetwork == true and $D.spec.template.spec.dnsPolicy == \"ClusterFirstWithHostNet\""
  "--set nodeSelector.pool=system --set tolerations[0].operator=Exists --set priorityClassName=system-cluster-critical --set podAnnotations.a=b --set podLabels.team=ml|$D.spec.template.spec.nodeSelector == {pool: \"system\"} and $D.spec.template.spec.tolerations == [{operator: \"Exists\"}] and $D.spec.template.spec.priorityClassName == \"system-cluster-critical\" and $D.spec.template.metadata.annotations == {a: \"b\"} and $D.spec.template.metadata.labels.team == \"ml\""
  "--set podDisruptionBudget.enabled=false|[.[] | select(.kind == \"PodDisruptionBudget\")] == []"
  "--set podDisruptionBudget.minAvailable=50%|(.[] | select(.kind == \"PodDisruptionBudget\")).spec.minAvailable == \"50%\""
  "--set service.port=8443|((.[] | select(.kind == \"Service\")).spec.ports[0].port == 8443) and ([$W[].clientConfig.service.port] | unique) == [8443]"
  "--set webhooks.timeoutSeconds=3|([$W[].timeoutSeconds] | unique) == [3]"
  "--set webhooks.mutate.failurePolicy=Ignore --set webhooks.validateAllPods.failurePolicy=Fail --set webhooks.validateRayObjects.failurePolicy=Fail|[$W[].failurePolicy] == [\"Ignore\", \"Fail\", \"Fail\"]"
  "--set webhooks.podCalls=two --set webhooks.mutate.failurePolicy=Ignore --set webhooks.validate.failurePolicy=Ignore --set webhooks.validateAllPods.failurePolicy=Fail --set webhooks.validateRayObjects.failurePolicy=Fail|[$W[].failurePolicy] == [\"Ignore\", \"Ignore\", \"Fail\", \"Fail\"]"
  "|[$M.webhooks[].clientConfig.service.path] == [\"/admit\"] and [$V.webhooks[].name] == [\"validate-all-pods.ray-webhook.io\", \"validate.rayclusters.ray-webhook.io\"]"
  "--set webhooks.podCalls=two|[$W[] | \"\\(.name) \\(.clientConfig.service.path)\"][0:2] == [\"mutate.pods.ray-webhook.io /mutate\", \"validate.pods.ray-webhook.io /validate\"]"
  "--set webhooks.validateAllPods.enabled=false --set webhooks.validateRayObjects.enabled=false|[.[] | select(.kind == \"ValidatingWebhookConfiguration\")] == []"
  "--set webhooks.excludeNamespaces={kube-system,kube-public}|([$W[].namespaceSelector.matchExpressions[0].values] | unique) == [[\"kube-system\", \"kube-public\", \"ray-webhook-system\"]]"
  "--set webhooks.validateAllPods.enabled=false|[$V.webhooks[].name] == [\"validate.rayclusters.ray-webhook.io\"]"
  "--set webhooks.validateRayObjects.enabled=false --set webhooks.podCalls=two|[$V.webhooks[].name] == [\"validate.pods.ray-webhook.io\", \"validate-all-pods.ray-webhook.io\"]"
  "|[$W[] | select(.matchConditions != null)] == []"
  "|[.[] | select(.kind == \"ServiceMonitor\" or .kind == \"PrometheusRule\" or .kind == \"ConfigMap\")] == [] and ($C.args | map(select(startswith(\"--audit\"))) | length) == 0"
  "--set audit.interval=5m|($C.args | index(\"--audit-interval=5m\")) != null and ($C.args | index(\"--audit-reports=openreports.io/v1alpha1\")) != null and ([(.[] | select(.kind == \"ClusterRole\")).rules[] | select(.apiGroups == [\"openreports.io\"]) | .resources] == [[\"reports\"]])"
  "--set audit.interval=5m --set audit.reports=off|([(.[] | select(.kind == \"ClusterRole\")).rules[].apiGroups[]] | sort) == [\"\", \"\", \"apps\", \"ray.io\"]"
  "--set audit.interval=5m --set audit.mode=list|($C.args | index(\"--audit-mode=list\")) != null and [(.[] | select(.kind == \"ClusterRole\")).rules[] | select(.verbs | index(\"watch\")) | .apiGroups[0]] == [\"apps\"]"
  "|($C.args | index(\"--kuberay-version=auto\")) != null and [(.[] | select(.kind == \"ClusterRole\")).rules[] | select(.apiGroups == [\"apps\"])] == [{apiGroups: [\"apps\"], resources: [\"deployments\"], verbs: [\"get\", \"list\", \"watch\"]}] and [.[] | select(.kind == \"Role\")] == []"
  "--set kuberay.operatorNamespace=ray-system|($C.args | index(\"--kuberay-operator-namespace=ray-system\")) != null and [(.[] | select(.kind == \"ClusterRole\")).rules[] | select(.apiGroups == [\"apps\"])] == [] and ((.[] | select(.kind == \"Role\")) | .metadata.namespace == \"ray-system\" and .rules == [{apiGroups: [\"apps\"], resources: [\"deployments\"], verbs: [\"get\", \"list\", \"watch\"]}]) and ((.[] | select(.kind == \"RoleBinding\")) | .metadata.namespace == \"ray-system\" and .subjects[0].namespace == \"ray-webhook-system\")"
  "--set kuberay.version=1.6.2|($C.args | index(\"--kuberay-version=1.6.2\")) != null and [(.[] | select(.kind == \"ClusterRole\")).rules[] | select(.apiGroups == [\"apps\"])] == [] and [.[] | select(.kind == \"Role\")] == []"
  "--set monitoring.prometheusRule.enabled=true --set fullnameOverride=rw|(.[] | select(.kind == \"PrometheusRule\")) as \$r | (\$r.spec.groups[0].rules | length) == 9 and ([\$r.spec.groups[0].rules[].expr | select(test(\"job=\\\"ray-webhook\\\"\"))] == []) and ([\$r.spec.groups[0].rules[].expr | select(test(\"job=\\\"rw\\\"\"))] | length) == 7 and (\$r.spec.groups[0].rules[0].annotations.summary | test(\"[{][{] [$]labels.name [}][}]\"))"
  "--set monitoring.serviceMonitor.enabled=true --set monitoring.serviceMonitor.labels.release=prom|(.[] | select(.kind == \"ServiceMonitor\")) as \$m | \$m.metadata.labels.release == \"prom\" and \$m.spec.endpoints[0].port == \"https\" and \$m.spec.endpoints[0].tlsConfig == {serverName: \"ray-webhook.ray-webhook-system.svc\", ca: {secret: {name: \"ray-webhook-serving-cert\", key: \"ca.crt\"}}} and \$m.spec.selector.matchLabels == {\"app.kubernetes.io/name\": \"ray-webhook\", \"app.kubernetes.io/instance\": \"ray-webhook\"}"
  "--set monitoring.dashboard.enabled=true --set monitoring.dashboard.namespace=grafana|(.[] | select(.kind == \"ConfigMap\")) as \$d | \$d.metadata.namespace == \"grafana\" and \$d.metadata.labels.grafana_dashboard == \"1\" and (\$d.data[\"ray-webhook.json\"] | fromjson | .uid) == \"ray-webhook\""
  "--set webhooks.matchConditions.enabled=true --kube-version 1.30.0|([$W[] | select(.matchConditions != null) | .name] == [\"mutate.pods.ray-webhook.io\"]) and ([$W[0:1][].matchConditions[0].expression | test(\"ray.io/cluster\") and test(\"ray.io/node-type\")] == [true])"
  "--set webhooks.matchConditions.enabled=true --set webhooks.podCalls=two --kube-version 1.30.0|([$W[] | select(.matchConditions != null) | .name] == [\"mutate.pods.ray-webhook.io\", \"validate.pods.ray-webhook.io\"])"
  "--set webhooks.matchConditions.skipSettledWorkers=true --kube-version 1.30.0|([$W[] | select(.matchConditions != null) | .name] == [\"mutate.pods.ray-webhook.io\"]) and ([$W[0:1][].matchConditions[].name] == [\"not-a-settled-worker\"]) and ($W[0].matchConditions[0].expression == \$settled)"
  "--set webhooks.matchConditions.enabled=true --set webhooks.matchConditions.skipSettledWorkers=true --set webhooks.podCalls=two --kube-version 1.30.0|[$W[0:2][] | [.matchConditions[].name]] == [[\"ray-pod\", \"not-a-settled-worker\"], [\"ray-pod\", \"not-a-settled-worker\"]]"
  "--set certificates.source=secret --set certificates.caBundle=QUJD --set certificates.secretName=my-tls|([$W[].clientConfig.caBundle] | unique) == [\"QUJD\"] and [.[] | select(.kind == \"Certificate\" or .kind == \"Issuer\" or .kind == \"Secret\")] == [] and $D.spec.template.spec.volumes[0].secret.secretName == \"my-tls\" and $M.metadata.annotations == null"
  "--set certificates.source=self-signed|(.[] | select(.kind == \"Secret\")) as \$s | ([$W[].clientConfig.caBundle] | unique) == [\$s.data[\"ca.crt\"]] and \$s.type == \"kubernetes.io/tls\" and \$s.metadata.name == $D.spec.template.spec.volumes[0].secret.secretName and [.[] | select(.kind == \"Certificate\")] == []"
  "--set certificates.certManager.issuerRef.kind=ClusterIssuer --set certificates.certManager.issuerRef.name=corp-ca --set certificates.certManager.issuerRef.group=cert-manager.io|[.[] | select(.kind == \"Issuer\")] == [] and [.[] | select(.kind == \"Certificate\") | .spec.issuerRef] == [{group: \"cert-manager.io\", kind: \"ClusterIssuer\", name: \"corp-ca\"}]"
  "--set certificates.certManager.duration=720h --set certificates.certManager.renewBefore=240h|[.[] | select(.kind == \"Certificate\" and .metadata.name == \"ray-webhook-serving-cert\") | .spec.duration, .spec.renewBefore] == [\"720h\", \"240h\"]"
  "--set namespace.create=true --set namespace.podSecurity=baseline|(.[] | select(.kind == \"Namespace\")).metadata.labels[\"pod-security.kubernetes.io/enforce\"] == \"baseline\""
  "--set fullnameOverride=ray-admission|([.[].metadata.name] | unique) == [\"ray-admission\", \"ray-admission-ca\", \"ray-admission-selfsigned\", \"ray-admission-serving-cert\"] and ([$W[].clientConfig.service.name] | unique) == [\"ray-admission\"]"
)
effect_files=()
for i in "${!effects[@]}"; do
  read -r -a a <<<"${effects[$i]%%|*}"
  if render "$work/effect-$i.yaml" "${a[@]}"; then effect_files+=("$work/effect-$i.yaml"); fi
done
to_json "${effect_files[@]}"
for i in "${!effects[@]}"; do
  args="${effects[$i]%%|*}"
  expr="${effects[$i]#*|}"
  if [ ! -f "$work/effect-$i.json" ]; then
    fail "${args:-the defaults}: does not render: $(head -c 300 "$work/effect-$i.yaml.stderr")"
  elif jq -e --rawfile settled "$repo/charts/ray-webhook/files/settled-worker.cel" '($settled | rtrimstr("\n")) as $settled | '"$expr" \
    "$work/effect-$i.json" >/dev/null 2>"$work/jq.err"; then
    pass "${args:-the defaults}: $(cut -c1-160 <<<"$expr")"
  else
    fail "${args:-the defaults}: not true: $expr $(head -c 300 "$work/jq.err")"
  fi
done

# ---- values the chart refuses, with the message it must give
printf 'rules:\n  secondHeadMode: off\n' >"$work/bare-off.yaml"  # YAML 1.1: false
refused=(
  "-f $work/bare-off.yaml|got boolean, want string"
  "--set rules.headNameMode=warning|headNameMode"
  "--set logLevel=verbose|logLevel"
  "--set kuberay.version=latest|version"
  "--set replica=3|replica"
  "--set certificates.source=vault|source"
  "--set certificates.source=secret|certificates.caBundle"
  "--set webhooks.matchConditions.enabled=true --kube-version 1.29.0|needs Kubernetes 1.30"
  "--set webhooks.matchConditions.enabled=true|needs Kubernetes 1.30"
  "--set webhooks.matchConditions.skipSettledWorkers=true --kube-version 1.29.0|needs Kubernetes 1.30"
  "--set webhooks.mutate.failurePolicy=Deny|failurePolicy"
  "--set webhooks.podCalls=1|podCalls"
  "--set extraArgs={--port=9443}|extraArgs: --port=9443 has a value of its own"
  "--set extraArgs={--cert-dir=/certs}|extraArgs: --cert-dir=/certs"
  "--set namespace.create=true --set hostNetwork=true --set containerPort=10443|namespace.podSecurity: privileged"
  "--set hostNetwork=true --set containerPort=443|containerPort and probePort of 1024 or more"
  "--set containerPort=70000|containerPort"
)
for r in "${refused[@]}"; do
  args="${r%%|*}"
  expect="${r#*|}"
  read -r -a a <<<"$args"
  if render "$work/refused.yaml" "${a[@]}"; then
    fail "$args: rendered, should be refused"
  elif grep -qF -- "$expect" "$work/refused.yaml.stderr"; then
    pass "$args: refused ($(grep -F -- "$expect" "$work/refused.yaml.stderr" | head -1 | cut -c1-160))"
  else
    fail "$args: refused, but without \"$expect\": $(head -c 300 "$work/refused.yaml.stderr")"
  fi
done
finish
