#!/usr/bin/env bash
# Prepares BUILD_DIR for a profile-guided build of the core:
#   scripts/build-with-profile.sh BUILD_DIR [CMAKE_ARG...]
# 1. configures BUILD_DIR with the CMAKE_ARGs and RAY_WEBHOOK_PGO=generate, and
#    builds pgo_train, which links the instrumented parts of the core;
# 2. runs pgo_train over tests/fixtures/reviews/*.json, which writes the profile
#    into BUILD_DIR/pgo-profile/;
# 3. configures BUILD_DIR again with RAY_WEBHOOK_PGO=use.
# It builds nothing else: the caller's next `cmake --build BUILD_DIR` compiles
# the core with the profile (and the rest as usual). Why:
# bench/journal/29-profile-guided-core.md.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: scripts/build-with-profile.sh BUILD_DIR [CMAKE_ARG...]" >&2; exit 2; }
dir="$1"
shift
rm -rf "$dir/pgo-profile"
cmake -S . -B "$dir" "$@" -DRAY_WEBHOOK_PGO=generate >/dev/null
cmake --build "$dir" -j"${JOBS:-2}" --target pgo_train
"$dir/pgo_train" tests/fixtures/reviews/*.json
cmake -S . -B "$dir" "$@" -DRAY_WEBHOOK_PGO=use >/dev/null
