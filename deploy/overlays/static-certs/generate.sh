#!/usr/bin/env bash
# Makes the serving certificate for the static-certs overlay, without cert-manager.
#
#   deploy/overlays/static-certs/generate.sh [--service NAME] [--namespace NS] [--days N] [--out DIR]
#
# Runs certs/generate.sh (a private CA and an ECDSA P-256 serving certificate
# whose SANs include NAME.NS.svc and NAME.NS.svc.cluster.local) into DIR/certs,
# then writes, from those files:
#   DIR/serving-cert-secret.yaml   Secret ray-webhook-serving-cert (kubernetes.io/tls: tls.crt, tls.key, ca.crt)
#   DIR/mutating-cabundle.yaml     JSON patches setting caBundle = the CA, one per webhook
#   DIR/validating-cabundle.yaml
# DIR defaults to generated/ beside this script, which is what the overlay's
# kustomization.yaml reads. Idempotent: a valid pair with the same SANs is kept,
# so running it again writes the same manifests. The defaults match deploy/base.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
service=ray-webhook
namespace=ray-webhook-system
days=365
out="$here/generated"
certs_script="${RAY_WEBHOOK_CERTS_SCRIPT:-$here/../../../certs/generate.sh}"
while [ $# -gt 0 ]; do
  case "$1" in
    --service) service="$2"; shift 2 ;;
    --namespace) namespace="$2"; shift 2 ;;
    --days) days="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "generate.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -f "$certs_script" ] || { echo "generate.sh: cannot find certs/generate.sh at $certs_script" >&2; exit 1; }

mkdir -p "$out"
out="$(cd "$out" && pwd)"
bash "$certs_script" --service "$service" --namespace "$namespace" --days "$days" --out "$out/certs"

b64() { base64 -w0 <"$1"; }
# The webhooks in deploy/base/webhooks.yaml: one mutating (Ray Pods), two validating (the opt-in Pod entry, ray.io objects).
mutating_webhooks=1
validating_webhooks=2

umask 077
{
  echo "# Written by generate.sh from $out/certs. Holds the private key: keep it out of git."
  echo "apiVersion: v1"
  echo "kind: Secret"
  echo "metadata:"
  echo "  name: ray-webhook-serving-cert  # mounted by deploy/base/deployment.yaml"
  echo "  namespace: ${namespace}"
  echo "  labels:"
  echo "    app.kubernetes.io/name: ray-webhook"
  echo "    app.kubernetes.io/part-of: ray-webhook"
  echo "type: kubernetes.io/tls"
  echo "data:"
  echo "  tls.crt: $(b64 "$out/certs/tls.crt")"
  echo "  tls.key: $(b64 "$out/certs/tls.key")"
  echo "  ca.crt: $(b64 "$out/certs/ca.crt")"
} >"$out/serving-cert-secret.yaml.tmp"

cabundle_patch() {
  local count="$1" i
  echo "# Written by generate.sh: caBundle is the CA in $out/certs/ca.crt."
  for ((i = 0; i < count; i++)); do
    echo "- op: add"
    echo "  path: /webhooks/$i/clientConfig/caBundle"
    echo "  value: $(b64 "$out/certs/ca.crt")"
  done
}
cabundle_patch "$mutating_webhooks" >"$out/mutating-cabundle.yaml.tmp"
cabundle_patch "$validating_webhooks" >"$out/validating-cabundle.yaml.tmp"
for f in serving-cert-secret mutating-cabundle validating-cabundle; do
  mv -f "$out/$f.yaml.tmp" "$out/$f.yaml"
done
echo "static-certs: wrote the Secret and caBundle patches to $out" >&2
