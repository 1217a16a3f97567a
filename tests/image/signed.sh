#!/usr/bin/env bash
# The image checks with a real registry: distribution's registry
# (tests/e2e/registry, pinned) on loopback with a throwaway CA, the image
# pushed there and signed with a throwaway cosign key pair by
# scripts/image.sh --push --sign, then tests/image/check.sh and
# tests/image/mistakes.sh with that registry and public key.
#   tests/image/signed.sh [ARCHIVE]   (default build/image/ray-webhook-VERSION.oci.tar)
# The registry and cosign are REGISTRY_BIN and COSIGN (default
# tests/e2e/.bin/registry and tests/e2e/.bin/cosign: scripts/e2e.sh --build
# builds both). Prints both scripts' lines, then "N passed, M failed".
set -uo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
version="$(sed -n 's/^project(ray-webhook VERSION \([0-9][0-9.]*\) .*/\1/p' "$repo/CMakeLists.txt")"
archive="${1:-$repo/build/image/ray-webhook-$version.oci.tar}"
registry_bin="${REGISTRY_BIN:-$repo/tests/e2e/.bin/registry}"
export COSIGN="${COSIGN:-$repo/tests/e2e/.bin/cosign}"
for b in "$registry_bin" "$COSIGN"; do
  [ -x "$b" ] || { echo "FAIL no $b (scripts/e2e.sh --build builds it)"; echo "0 passed, 1 failed"; exit 1; }
done
work="$(mktemp -d)"
registry_pid=""
trap '[ -z "$registry_pid" ] || kill "$registry_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT

# A CA and the registry's serving pair for 127.0.0.1, valid for a day.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=image-check-ca \
  -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj /CN=127.0.0.1 \
  -keyout "$work/tls.key" -out "$work/tls.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$work/ext"
openssl x509 -req -in "$work/tls.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -days 1 \
  -extfile "$work/ext" -out "$work/tls.crt" 2>/dev/null
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
sed -e "s|@ROOT@|$work/data|; s|@ADDR@|127.0.0.1:$port|; s|@CERT@|$work/tls.crt|; s|@KEY@|$work/tls.key|" \
  "$repo/tests/e2e/registry/config.yml.tmpl" >"$work/config.yml"
"$registry_bin" serve "$work/config.yml" >"$work/registry.log" 2>&1 &
registry_pid=$!
for _ in $(seq 50); do
  curl -sf --cacert "$work/ca.crt" "https://127.0.0.1:$port/v2/" >/dev/null && break
  sleep 0.2
done
curl -sf --cacert "$work/ca.crt" "https://127.0.0.1:$port/v2/" >/dev/null \
  || { echo "FAIL the registry did not start: $(tail -3 "$work/registry.log")"; echo "0 passed, 1 failed"; exit 1; }

(cd "$work" && COSIGN_PASSWORD= "$COSIGN" generate-key-pair >/dev/null 2>&1) \
  || { echo "FAIL cosign generate-key-pair"; echo "0 passed, 1 failed"; exit 1; }
if ! COSIGN_PASSWORD= bash "$repo/scripts/image.sh" --push "127.0.0.1:$port" --archive "$archive" \
  --ca-file "$work/ca.crt" --sign "$work/cosign.key" >"$work/pushed" 2>"$work/push.log"; then
  echo "FAIL scripts/image.sh --push --sign: $(tail -5 "$work/push.log")"; echo "0 passed, 1 failed"; exit 1
fi
registry_args=(--registry "127.0.0.1:$port/ray-webhook" --key "$work/cosign.pub" --ca-file "$work/ca.crt")
passed=0
failed=0
for script in check mistakes; do
  bash "$repo/tests/image/$script.sh" "$archive" "${registry_args[@]}" | tee "$work/$script.out"
  read -r p _ f _ < <(tail -1 "$work/$script.out")
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-1}))
done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
