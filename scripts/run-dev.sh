#!/usr/bin/env bash
# Builds ray-webhook and serves it on https://127.0.0.1:8443 with throw-away
# certificates from certs/generate.sh (written to certs/out/, CA in certs/out/ca.crt).
# Extra arguments are passed to `ray-webhook serve`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
bash certs/generate.sh --out certs/out
exec build/ray-webhook serve --bind 127.0.0.1 --port 8443 \
  --tls-cert certs/out/tls.crt --tls-key certs/out/tls.key "$@"
