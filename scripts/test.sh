#!/usr/bin/env bash
# Builds ray-webhook and runs every test under CTest: unit tests and the replay
# of AdmissionReview fixtures against the real HTTPS server.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --test
cd build
ctest --output-on-failure -j"${JOBS:-2}"
