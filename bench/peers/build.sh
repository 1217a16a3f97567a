#!/usr/bin/env bash
# Builds the Go peers of bench/ (this module: go.mod and go.sum pinned) into
# build-bench/peers/, or into OUT_DIR: stdlib-peer and controller-runtime-peer.
#
#   bench/peers/build.sh [OUT_DIR]
#
# The Go build cache makes a second run cheap. Go as for the end-to-end suite:
# /usr/local/go/bin first on PATH, GOTOOLCHAIN=local.
set -euo pipefail
if [ $# -gt 0 ]; then
  mkdir -p "$1"
  out="$(cd "$1" && pwd)"
else
  out="$(cd "$(dirname "$0")/../.." && pwd)/build-bench/peers"
fi
cd "$(dirname "$0")"
[ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
export PATH GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
mkdir -p "$out"
# Static (CGO_ENABLED=0), as such operators ship and as bench/image-size.sh builds
# controller-runtime-peer: one build of their packages serves both scripts. cgo would
# only change how the peers resolve names and users, which no benchmark does.
CGO_ENABLED=0 go build -trimpath -o "$out/" ./cmd/...
