#!/usr/bin/env bash
# Installs missing Debian packages, then configures and builds into build/,
# the core with profile-guided optimisation (scripts/build-with-profile.sh).
#   scripts/build.sh           the server only
#   scripts/build.sh --test    the server, its tests and the benchmarks (bench/), whose scripts CTest runs
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--test" ]; then
  bash scripts/install-deps.sh --test
  tests=ON
  bench=ON
else
  bash scripts/install-deps.sh
  tests=OFF
  bench=OFF
fi
bash scripts/build-with-profile.sh build -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-Release}" -DRAY_WEBHOOK_BUILD_TESTS=$tests \
  -DRAY_WEBHOOK_BUILD_BENCH=$bench
cmake --build build -j"${JOBS:-2}"
