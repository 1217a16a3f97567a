#!/usr/bin/env bash
# Builds the Go peers of bench/ (this module: go.mod and go.sum pinned) into
# build-bench/peers/: stdlib-peer and controller-runtime-peer. The Go build
# cache makes a second run cheap. Go as for the end-to-end suite:
# /usr/local/go/bin first on PATH, GOTOOLCHAIN=local.
set -euo pipefail
cd "$(dirname "$0")"
[ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
export PATH GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
out="$(cd ../.. && pwd)/build-bench/peers"
mkdir -p "$out"
go build -trimpath -o "$out/" ./cmd/...
