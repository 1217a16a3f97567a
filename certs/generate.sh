#!/usr/bin/env bash
# Makes a throw-away CA and an ECDSA P-256 serving certificate for ray-webhook.
#
#   certs/generate.sh [--service NAME] [--namespace NS] [--out DIR] [--days N]
#
# Writes DIR/ca.crt, ca.key, tls.crt, tls.key (the controller-runtime layout).
# The serving certificate's SANs: localhost, 127.0.0.1, ::1, NAME.NS.svc and
# NAME.NS.svc.cluster.local (kube-apiserver verifies the SAN, never the CN,
# since Kubernetes 1.19). Idempotent: an existing pair that is still valid for
# at least a day, signed by DIR/ca.crt and carrying the same SANs is kept.
set -euo pipefail

service=ray-webhook
namespace=ray-webhook-system
out="$(cd "$(dirname "$0")" && pwd)/out"
days=365
while [ $# -gt 0 ]; do
  case "$1" in
    --service) service="$2"; shift 2 ;;
    --namespace) namespace="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --days) days="$2"; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "generate.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

mkdir -p "$out"
cd "$out"
sans="DNS:localhost,IP:127.0.0.1,IP:::1,DNS:${service}.${namespace}.svc,DNS:${service}.${namespace}.svc.cluster.local"

current_sans() {
  openssl x509 -in tls.crt -noout -ext subjectAltName 2>/dev/null | tail -n +2 | tr -d ' \n' \
    | sed 's/IPAddress:/IP:/g; s/0:0:0:0:0:0:0:1/::1/g'
}
if [ -s ca.crt ] && [ -s ca.key ] && [ -s tls.crt ] && [ -s tls.key ] \
  && openssl x509 -in tls.crt -noout -checkend 86400 >/dev/null 2>&1 \
  && openssl verify -CAfile ca.crt tls.crt >/dev/null 2>&1 \
  && [ "$(current_sans)" = "$sans" ]; then
  echo "certs: keeping the valid pair in $out" >&2
  exit 0
fi

umask 077
openssl ecparam -name prime256v1 -genkey -noout -out ca.key.tmp
openssl req -x509 -new -key ca.key.tmp -sha256 -days "$days" -subj "/CN=ray-webhook-ca" \
  -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
  -out ca.crt.tmp
openssl ecparam -name prime256v1 -genkey -noout -out tls.key.tmp
openssl req -new -key tls.key.tmp -subj "/CN=${service}.${namespace}.svc" -out tls.csr.tmp
cat > ext.tmp <<EXT
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=${sans}
EXT
openssl x509 -req -in tls.csr.tmp -CA ca.crt.tmp -CAkey ca.key.tmp -CAcreateserial -sha256 -days "$days" \
  -extfile ext.tmp -out tls.crt.tmp 2>/dev/null
# Move into place only when all four exist, so a failed run leaves the old pair.
for f in ca.key ca.crt tls.key tls.crt; do mv -f "$f.tmp" "$f"; done
chmod 644 ca.crt tls.crt
rm -f tls.csr.tmp ext.tmp ca.crt.srl ca.crt.tmp.srl
echo "certs: wrote a new CA and serving pair to $out" >&2
