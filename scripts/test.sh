#!/usr/bin/env bash
# Builds ray-webhook and runs every test:
#  1. the normal build, the C++ formatting check (scripts/check-format.sh),
#     clang's lock analysis over src/ (scripts/check-thread-safety.sh), and
#     all of CTest: unit, integration, replay against the real HTTPS server,
#     server stress tests, schema, manifest and layering tests;
#  2. a build with AddressSanitizer and UBSan, and the unit, integration and
#     replay tests under it, and the server's shutdown and edge cases;
#  3. the libFuzzer targets for 60 seconds (FUZZ_SECONDS to change), then the
#     container image (scripts/image.sh), and the --smoke runs of
#     bench/image-size.sh and bench/peers.sh;
#  4. the end-to-end suite on a whole cluster (kube-apiserver, etcd, the
#     controllers, the scheduler, KWOK, CoreDNS) and KubeRay operators: the Go
#     suite, whose framework brings the cluster up, with ray-webhook run from
#     the image (scripts/e2e.sh; needs root for its network namespace). Its Go builds start right after the first build.
#     Before it, the image's checks with a registry of their own (tests/image/signed.sh: check.sh, mistakes.sh).
#     Then bench/apiserver.sh --smoke on a control plane of its own.
# `scripts/test.sh --quick` runs step 1 only. Ends with one "N passed, N failed" line.
set -euo pipefail
cd "$(dirname "$0")/.."
log=$(mktemp)
trap 'rm -f "$log"' EXIT
total=0
# phase TITLE: a heading with the seconds since the start, so a slow run shows where it went.
phase() { echo "== [$(printf '%5d' "$SECONDS") s] $*"; }
# ctest_in DIR ARGS...: runs CTest, adds its test count to the total.
ctest_in() {
  local dir="$1"; shift
  (cd "$dir" && ctest --output-on-failure -j"${JOBS:-2}" "$@") | tee "$log"
  local n
  n=$(sed -n 's/.*tests passed, 0 tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -n1)
  total=$((total + ${n:-0}))
}

# The packages first: the end-to-end tools come with them.
bash scripts/install-deps.sh --test
# The end-to-end suite's Go builds (the longest part of a run with empty Go
# caches) start now, at the lowest priority: their module downloads overlap the
# C++ build, and they take the CPU the C++ builds, the tests' waits and the
# single-threaded fuzzer leave idle, and yield it to them otherwise.
go_build_log=""
if [ "${1:-}" != "--quick" ]; then
  go_build_log=$(mktemp)
  E2E_GO_P="${E2E_GO_P:-2}" nice -n 19 bash scripts/e2e.sh --build >"$go_build_log" 2>&1 &
  go_build_pid=$!
  # (|| true: the trap's last status is the script's, and the build has usually ended)
  trap 'rm -f "$log" "$go_build_log"; kill "$go_build_pid" 2>/dev/null || true' EXIT
fi
phase "the build (scripts/build.sh --test: profile-guided)"
bash scripts/build.sh --test

phase "the format and lock checks, then CTest"
bash scripts/check-format.sh
total=$((total + 1))
bash scripts/check-thread-safety.sh build
total=$((total + 1))
ctest_in build
if [ "${1:-}" != "--quick" ]; then
  phase "unit, integration and replay tests under AddressSanitizer and UBSan"
  # -O1 -g1, as the sanitizers' own documentation builds: reports keep their file:line frames, and
  # the build takes about half the compile time of -O2 -g (bench/journal/67-cold-run.md).
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
    -DRAY_WEBHOOK_SANITIZE=ON >/dev/null
  cmake --build build-asan -j"${JOBS:-2}"
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest_in build-asan -E '^(deploy|schema|server\.)'
  # A shutdown under load exits 0 under the sanitizers too (leaks included: LeakSanitizer's exit is 23).
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest_in build-asan \
    -R '^server\.(shutdown|http|tls)$'

  phase "fuzzing the review entry point for ${FUZZ_SECONDS:-60} s"
  bash fuzz/run.sh "${FUZZ_SECONDS:-60}"
  total=$((total + 1))

  phase "the image users install (scripts/image.sh: debootstrap base, buildah)"
  # The binary step 1 built from this tree goes into the image as it is (BINARY=context).
  IMAGE_BINARY=build/ray-webhook bash scripts/image.sh
  version="$(sed -n 's/^project(ray-webhook VERSION \([0-9][0-9.]*\) .*/\1/p' CMakeLists.txt)"
  # The bench/ scripts CTest cannot run, in their --smoke mode (bench/CMakeLists.txt runs the others).
  phase "the image's size beside the Go peer's, and the server against its peers (bench/ --smoke)"
  bash bench/image-size.sh --smoke "build/image/ray-webhook-$version.oci.tar"
  bash bench/peers.sh --smoke --no-build --build-dir build
  total=$((total + 2))

  phase "end to end: a real cluster and KubeRay operators built from Go modules (scripts/e2e.sh)"
  wait "$go_build_pid" || { cat "$go_build_log"; echo "scripts/e2e.sh --build failed"; exit 1; }
  cat "$go_build_log"
  phase "the image checked, pushed to a registry, signed and verified, and its mistakes (tests/image/signed.sh)"
  bash tests/image/signed.sh "build/image/ray-webhook-$version.oci.tar" | tee "$log"
  n=$(sed -n 's/^\([0-9]*\) passed, 0 failed$/\1/p' "$log" | tail -n1)
  [ -n "$n" ] || { echo "tests/image/signed.sh failed"; exit 1; }
  total=$((total + n))
  phase "the end-to-end suite"
  E2E_IMAGE="build/image/ray-webhook-$version.oci.tar" E2E_GO_P="${E2E_GO_P:-2}" bash scripts/e2e.sh | tee "$log"
  n=$(sed -n 's/^\([0-9]*\) passed, 0 failed$/\1/p' "$log" | tail -n1)
  total=$((total + ${n:-0}))
  phase "bench/apiserver.sh --smoke: what a webhook adds to a Pod creation, on a control plane of its own"
  bash bench/apiserver.sh --smoke --no-build --build-dir build
  total=$((total + 1))
fi
phase "done"
echo "scripts/test.sh: $total passed, 0 failed"
