#!/usr/bin/env bash
# Builds the libFuzzer targets with clang, AddressSanitizer and UBSan, seeds
# them with the fixtures, and fuzzes for a bounded time: the review entry
# point for SECONDS, the request framing for a third of that.
#   fuzz/run.sh [SECONDS]   (default 60)
# Exits non-zero when the fuzzer finds a crash; the input is left in build-fuzz/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
bash scripts/install-deps.sh --fuzz
CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRAY_WEBHOOK_FUZZ=ON \
  -DRAY_WEBHOOK_BUILD_TESTS=OFF >/dev/null
cmake --build build-fuzz -j"${JOBS:-2}" --target review_fuzzer http_head_fuzzer
corpus=build-fuzz/corpus
mkdir -p "$corpus"
cp tests/fixtures/reviews/*.json tests/fixtures/bad-requests/*.body "$corpus"/ 2>/dev/null || true
cd build-fuzz
./fuzz/review_fuzzer -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
  -print_final_stats=1 corpus 2>&1 | tail -n 25
mkdir -p heads
cp ../tests/fixtures/http-heads/* heads/
./fuzz/http_head_fuzzer -max_total_time="$((seconds / 3 + 1))" -timeout=10 -rss_limit_mb=2048 -max_len=8192 \
  -print_final_stats=1 heads 2>&1 | tail -n 12
