#!/usr/bin/env bash
# The checks catch the mistakes they are there for. Each case below breaks one
# thing in a temp copy of deploy/ (or of the Dockerfile), renders it, and expects
# check_manifests.mjs to fail with the given message; a case that passes means a
# check has gone blind.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

need kubectl "install Debian's kubernetes-client (apt-get install kubernetes-client)"
need node "install nodejs and npm"
deploy_node_modules || { fail "npm ci in tests/deploy failed"; finish; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
copy_deploy_tree "$work/pristine" || { fail "generate.sh failed"; finish; }
cp "$repo/Dockerfile" "$work/pristine/Dockerfile"

# file (under the copy) | sed script (first match only) | expected FAIL text
cases=(
  "deploy/base/service.yaml|0,/targetPort: https/s//targetPort: 9443/|targets the container port"
  "deploy/base/webhooks.yaml|0,/path: \/admit/s//path: \/mutating/|path is the server's /admit or /mutate"
  "deploy/base/webhooks.yaml|0,/path: \/admit/s//path: \/mutate/|is reviewed in one call (/admit) or two"
  "deploy/base/webhooks.yaml|0,/path: \/validate/s//path: \/mutate/|path is the server's /validate"
  "deploy/base/webhooks.yaml|0,/\"kube-system\", \"ray-webhook-system\"/s//\"kube-system\"/|namespaceSelector never matches ray-webhook-system"
  "deploy/base/webhooks.yaml|0,/\"kube-system\", \"ray-webhook-system\"/s//\"ray-webhook-system\"/|namespaceSelector never matches kube-system"
  "deploy/base/webhooks.yaml|0,/objectSelector:/s//objectSelectors:/|sees only Ray Pods"
  "deploy/base/webhooks.yaml|/validate-all-pods.ray-webhook.io/,\${s/values: \[\"head\", \"worker\"\]/values: [\"head\"]/}|opt-in entry covers the non-Ray Pods only"
  "deploy/base/webhooks.yaml|/validate.rayclusters.ray-webhook.io/,\${s/operations: \[\"CREATE\", \"UPDATE\"\]/operations: [\"CREATE\"]/}|rules are ray.io rayclusters, rayjobs, rayservices and raycronjobs"
  "deploy/base/webhooks.yaml|/validate.rayclusters.ray-webhook.io/,\${s/resources: \[\"rayclusters\", /resources: [\"rayclusters\/status\", /}|rules are ray.io rayclusters, rayjobs, rayservices and raycronjobs"
  "deploy/base/webhooks.yaml|0,/^      name: ray-webhook\$/s//      name: ray-webhook-svc/|calls Service ray-webhook-system/ray-webhook"
  "deploy/base/webhooks.yaml|0,/timeoutSeconds: 5/s//timeoutSeconds: 15/|timeoutSeconds set and at most 5"
  "deploy/base/webhooks.yaml|0,/reinvocationPolicy: IfNeeded/s//reinvocationPolicy: Never/|reinvocationPolicy IfNeeded"
  "deploy/base/webhooks.yaml|0,/failurePolicy: Fail/s//failurePolicy: Ignore/|failing closed"
  "deploy/base/webhooks.yaml|0,/- v1beta1\"\]/s//- v1\"]/;0,/\[\"v1\", \"v1beta1\"\]/s//[\"v1\"]/|admissionReviewVersions [v1, v1beta1]"
  "deploy/base/deployment.yaml|0,/terminationGracePeriodSeconds: 40/s//terminationGracePeriodSeconds: 30/|covers --drain-delay"
  "deploy/base/deployment.yaml|0,/--shutdown-grace=30s/s//--shutdown-grace=60s/|covers --drain-delay"
  "deploy/base/deployment.yaml|0,/path: \/readyz/s//path: \/ready/|readinessProbe GETs /readyz"
  "deploy/base/deployment.yaml|0,/path: \/healthz/s//path: \/readyz/|livenessProbe GETs /healthz"
  "deploy/base/deployment.yaml|0,/scheme: HTTP$/s//scheme: HTTPS/|readinessProbe uses plain HTTP"
  "deploy/base/deployment.yaml|0,/port: probes/s//port: https/|readinessProbe port https is the container port of --probe-port"
  "deploy/base/deployment.yaml|0,/- --probe-port=8081/s//- --probe-port=0/|serves its probe port"
  "deploy/base/deployment.yaml|0,/--port=8443/s//--port=9443/|containerPort is the server's --port"
  "deploy/base/deployment.yaml|0,/--drain-delay=5s/s//--drain-dealy=5s/|is a flag of ray-webhook serve"
  "deploy/base/deployment.yaml|0,/mountPath: \/tmp\/k8s-webhook-server\/serving-certs/s//mountPath: \/certs/|mounted at the image's --cert-dir"
  "deploy/base/deployment.yaml|0,/secretName: ray-webhook-serving-cert/s//secretName: serving-cert/|a Certificate writes the mounted Secret serving-cert"
  "deploy/base/deployment.yaml|0,/readOnlyRootFilesystem: true/s//readOnlyRootFilesystem: false/|readOnlyRootFilesystem"
  "deploy/base/deployment.yaml|0,/replicas: 2/s//replicas: 1/|at least 2 replicas"
  "deploy/base/deployment.yaml|0,/topologyKey: kubernetes.io\/hostname/s//topologyKey: example.com\/rack/|topology spread across nodes"
  "deploy/base/deployment.yaml|/allowPrivilegeEscalation/,/seccompProfile/s/runAsUser: 65532/runAsUser: 1000/|the Dockerfile's USER"
  "deploy/base/service.yaml|0,/app.kubernetes.io\/component: admission-webhook/s//app.kubernetes.io\/component: other/|selects the Deployment's Pods"
  "deploy/base/poddisruptionbudget.yaml|0,/minAvailable: 1/s//minAvailable: 0/|PodDisruptionBudget minAvailable 1"
  "deploy/base/rbac.yaml|0,/verbs: \[\"get\", \"list\"\]/s//verbs: [\"get\", \"list\", \"delete\"]/|ClusterRole is read-only"
  "deploy/base/rbac.yaml|0,/  namespace: ray-webhook-system/s//  namespace: default/|binds the webhook's ServiceAccount"
  "deploy/overlays/cert-manager/certificates.yaml|0,/- ray-webhook.ray-webhook-system.svc\$/s//- ray-webhook.default.svc/|Certificate dnsNames include"
  "deploy/overlays/cert-manager/certificates.yaml|0,/isCA: true/s//isCA: false/|isCA: true"
  "deploy/overlays/cert-manager/certificates.yaml|/name: ray-webhook-serving-cert/,\$s/size: 256/size: 384/|serving key is ECDSA P-256"
  "deploy/overlays/cert-manager/inject-ca.yaml|0,/ray-webhook-system\/ray-webhook-serving-cert/s//ray-webhook-system\/ray-webhook-ca/|inject-ca-from"
  "deploy/examples/warn-mode/warn-mode.yaml|0,/--head-name-mode=warn/s//--head-name-mode=warning/|is one of enforce|warn|off"
  "Dockerfile|0,/^USER 65532:65532/s//USER 1000:1000/|the Dockerfile's USER"
  "Dockerfile|0,/\"--cert-dir\", \"\/tmp\/k8s-webhook-server\/serving-certs\"/s//\"--cert-dir\", \"\/certs\"/|mounted at the image's --cert-dir"
  "deploy/overlays/audit/rbac-audit.yaml|0,/\"rayjobs\", /s///|lists rayclusters, rayjobs, rayservices and raycronjobs"
  "deploy/overlays/audit/rbac-audit.yaml|0,/\"watch\"\]/s//\"watch\", \"patch\"]/|ClusterRole is read-only"
  "deploy/overlays/audit/rbac-audit.yaml|s/verbs: \[\"watch\"\]/verbs: [\"get\"]/|watches those and pods"
  "deploy/overlays/audit/rbac-audit.yaml|0,/\"reports\"\]/s//\"reports\", \"reports\/status\"]/|ClusterRole is read-only"
  "deploy/overlays/audit/rbac-audit.yaml|0,/resources: \[\"reports\"\]/s//resources: [\"clusterreports\"]/|writes the audit's policy reports"
  "deploy/overlays/audit/audit-interval.yaml|0,/--audit-interval=5m/s//--audit-interval=off/|overlays/audit turns the periodic audit on"
  "deploy/overlays/audit/audit-interval.yaml|0,/--audit-interval=5m/s//--audit-interval=5s/|--audit-interval is a minute or more"
)

run_case() {
  local file="$1" script="$2" expect="$3" tree="$work/case" out
  rm -rf "$tree" "$work/rendered"
  cp -R "$work/pristine" "$tree"
  cp "$tree/$file" "$work/before"
  sed -i -e "$script" "$tree/$file"
  if cmp -s "$work/before" "$tree/$file"; then
    fail "case did not change $file: $script"
    return
  fi
  render_tree "$tree" "$work/rendered" >/dev/null
  local args=()
  for f in "$work"/rendered/*.yaml; do
    if [ "$(basename "$f")" = base.yaml ]; then args+=(--base "$f"); else args+=("$f"); fi
  done
  if out="$(node "$deploy_tests/check_manifests.mjs" --dockerfile "$tree/Dockerfile" "${args[@]}")"; then
    fail "$file ($script): the checks still pass"
  elif grep '^FAIL' <<<"$out" | grep -F -- "$expect" >/dev/null; then
    pass "$file ($script) fails with \"$expect\""
  else
    fail "$file ($script): expected a failure saying \"$expect\", got: $(grep '^FAIL' <<<"$out" | head -3)"
  fi
}

for c in "${cases[@]}"; do
  IFS='|' read -r file script expect <<<"$c"
  run_case "$file" "$script" "$expect"
done

# static-certs: a caBundle from another CA does not verify the serving certificate.
rm -rf "$work/case" "$work/rendered"
cp -R "$work/pristine" "$work/case"
bash "$work/case/deploy/overlays/static-certs/generate.sh" --out "$work/other-ca" >/dev/null 2>&1
cp "$work/other-ca/mutating-cabundle.yaml" "$work/other-ca/validating-cabundle.yaml" "$work/case/deploy/overlays/static-certs/generated/"
kubectl kustomize "$work/case/deploy/overlays/static-certs" >"$work/static.yaml" 2>/dev/null
if out="$(node "$deploy_tests/check_manifests.mjs" --dockerfile "$repo/Dockerfile" "$work/static.yaml")"; then
  fail "static-certs with another CA's caBundle: the checks still pass"
elif grep '^FAIL' <<<"$out" | grep -F "caBundle signed the serving certificate" >/dev/null; then
  pass "static-certs with another CA's caBundle fails with \"caBundle signed the serving certificate\""
else
  fail "static-certs with another CA's caBundle: $(grep '^FAIL' <<<"$out" | head -3)"
fi
finish
