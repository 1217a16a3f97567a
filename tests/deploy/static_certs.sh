#!/usr/bin/env bash
# deploy/overlays/static-certs/generate.sh, run in a temp copy of the tree:
# the caBundle it patches into both webhook configurations is a CA that
# `openssl verify` accepts for the serving certificate in its Secret, for the
# Service's DNS names and no other; running it again changes nothing; its output
# is git-ignored; other --service/--namespace values give matching names.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

need openssl "install openssl"
need kubectl "install Debian's kubernetes-client (apt-get install kubernetes-client)"
need node "install nodejs and npm"
need jq "install jq"
deploy_node_modules || { fail "npm ci in tests/deploy failed"; finish; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
tree="$work/tree"
overlay="$tree/deploy/overlays/static-certs"
svc=ray-webhook
ns=ray-webhook-system

if copy_deploy_tree "$tree"; then
  pass "generate.sh ran in $tree"
else
  fail "generate.sh failed"
  finish
fi
for f in certs/ca.crt certs/ca.key certs/tls.crt certs/tls.key serving-cert-secret.yaml mutating-cabundle.yaml validating-cabundle.yaml; do
  if [ -s "$overlay/generated/$f" ]; then pass "wrote generated/$f"; else fail "did not write generated/$f"; fi
done
key_mode="$(stat -c %a "$overlay/generated/serving-cert-secret.yaml")"
if [ "$key_mode" = 600 ]; then pass "the Secret manifest (a private key) is mode 600"; else fail "the Secret manifest is mode $key_mode, not 600"; fi

# Take the caBundle and the Secret from what kubectl renders, not from the
# files, so this is what a cluster would receive.
if kubectl kustomize "$overlay" >"$work/rendered.yaml" 2>"$work/stderr"; then
  pass "kubectl kustomize deploy/overlays/static-certs"
else
  fail "kubectl kustomize deploy/overlays/static-certs: $(cat "$work/stderr")"
  finish
fi
node "$deploy_tests/yaml2json.mjs" "$work/rendered.yaml" >"$work/rendered.json"
jq -r '.[] | select(.kind | test("WebhookConfiguration$")) | .webhooks[] | .clientConfig.caBundle // "-"' \
  "$work/rendered.json" >"$work/bundles"
n="$(wc -l <"$work/bundles")"
if [ "$n" -ge 3 ] && ! grep -qx -- - "$work/bundles" && [ "$(sort -u "$work/bundles" | wc -l)" = 1 ]; then
  pass "all $n webhooks carry the same caBundle"
else
  fail "webhooks without a caBundle, or different ones: $(cut -c1-20 "$work/bundles" | tr '\n' ' ')"
fi
head -n1 "$work/bundles" | base64 -d >"$work/cabundle.pem"
jq -r '.[] | select(.kind == "Secret" and .metadata.name == "ray-webhook-serving-cert") | .data["tls.crt"]' \
  "$work/rendered.json" | base64 -d >"$work/tls.crt"
jq -r '.[] | select(.kind == "Secret" and .metadata.name == "ray-webhook-serving-cert") | .data["tls.key"]' \
  "$work/rendered.json" | base64 -d >"$work/tls.key"

for host in "$svc.$ns.svc" "$svc.$ns.svc.cluster.local"; do
  if out="$(openssl verify -CAfile "$work/cabundle.pem" -purpose sslserver -verify_hostname "$host" "$work/tls.crt" 2>&1)"; then
    pass "openssl verify: caBundle verifies the serving certificate for $host"
  else
    fail "openssl verify for $host: $out"
  fi
done
if openssl verify -CAfile "$work/cabundle.pem" -verify_hostname "$svc.default.svc" "$work/tls.crt" >/dev/null 2>&1; then
  fail "the serving certificate also verifies for $svc.default.svc (verify_hostname has no effect?)"
else
  pass "the serving certificate does not verify for another namespace's name"
fi
if openssl x509 -in "$work/cabundle.pem" -noout -ext basicConstraints 2>/dev/null | grep 'CA:TRUE' >/dev/null \
  && ! cmp -s "$work/cabundle.pem" "$work/tls.crt"; then
  pass "caBundle is the CA, not the serving certificate"
else
  fail "caBundle is not a CA certificate"
fi
if [ "$(openssl pkey -in "$work/tls.key" -pubout 2>/dev/null)" = "$(openssl x509 -in "$work/tls.crt" -noout -pubkey)" ]; then
  pass "the Secret's tls.key belongs to its tls.crt"
else
  fail "the Secret's tls.key does not match its tls.crt"
fi
if openssl x509 -in "$work/tls.crt" -noout -text | grep 'ASN1 OID: prime256v1' >/dev/null; then
  pass "the serving key is ECDSA P-256"
else
  fail "the serving key is not ECDSA P-256"
fi

# Idempotent: a second run keeps the pair, so the manifests are unchanged.
cp -R "$overlay/generated" "$work/first"
if bash "$overlay/generate.sh" >/dev/null 2>&1 && diff -r "$work/first" "$overlay/generated" >/dev/null; then
  pass "running generate.sh again changes nothing"
else
  fail "running generate.sh again changed its output"
fi

# Other names: the SANs follow --service and --namespace, and --out is honoured.
if bash "$overlay/generate.sh" --service hooks --namespace team-a --out "$work/other" >/dev/null 2>&1 \
  && openssl verify -CAfile "$work/other/certs/ca.crt" -verify_hostname hooks.team-a.svc "$work/other/certs/tls.crt" >/dev/null 2>&1 \
  && grep -q '^  namespace: team-a$' "$work/other/serving-cert-secret.yaml"; then
  pass "--service hooks --namespace team-a --out DIR: a certificate for hooks.team-a.svc and a Secret in team-a"
else
  fail "--service/--namespace/--out were not honoured"
fi

# The work tree's generated/ (private keys) is never committed.
if command -v git >/dev/null && git -C "$repo" rev-parse --git-dir >/dev/null 2>&1; then
  if git -C "$repo" check-ignore -q deploy/overlays/static-certs/generated/certs/tls.key \
    && git -C "$repo" check-ignore -q deploy/overlays/static-certs/generated/serving-cert-secret.yaml; then
    pass "deploy/overlays/static-certs/generated/ is git-ignored"
  else
    fail "deploy/overlays/static-certs/generated/ is not git-ignored"
  fi
fi
finish
