#!/usr/bin/env bash
# Builds ray-webhook and runs every test:
#  1. the normal build, and all of CTest: unit, integration, replay against the
#     real HTTPS server, server stress tests, schema and manifest tests;
#  2. a build with AddressSanitizer and UBSan, and the unit, integration and
#     replay tests under it;
#  3. the libFuzzer target for 60 seconds (FUZZ_SECONDS to change).
# `scripts/test.sh --quick` runs step 1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --test
(cd build && ctest --output-on-failure -j"${JOBS:-2}")
[ "${1:-}" = "--quick" ] && exit 0

echo "== unit, integration and replay tests under AddressSanitizer and UBSan"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAY_WEBHOOK_SANITIZE=ON >/dev/null
cmake --build build-asan -j"${JOBS:-2}"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --output-on-failure -j"${JOBS:-2}" -E '^(deploy|schema|server\.)')

echo "== fuzzing the review entry point for ${FUZZ_SECONDS:-60} s"
bash fuzz/run.sh "${FUZZ_SECONDS:-60}"
