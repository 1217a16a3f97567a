# Shared by bench/*.sh (sourced, not run): installing what is missing, the
# Release build of ray-webhook, ceiling_server and review_bench, and the checks
# of --smoke (every script's quick run for CTest: BENCH_SMOKE=1).

# bench_install PACKAGE...: the project's own dependencies (scripts/install-deps.sh)
# plus the given Debian packages, each only when missing. Under --smoke
# (BENCH_SMOKE=1) it installs nothing, since a test must not need the network:
# it fails, naming the packages that are missing.
bench_install() {
  [ -n "${BENCH_SMOKE:-}" ] || bash scripts/install-deps.sh
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ -n "${BENCH_SMOKE:-}" ]; then
    echo "bench: smoke: missing packages: ${missing[*]} (apt-get install them, or run without --smoke)" >&2
    return 1
  fi
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "bench: need root or sudo to install: ${missing[*]}" >&2; return 1; }
    sudo="sudo"
  fi
  echo "bench: installing ${missing[*]}" >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# bench_build BUILD_DIR LOG [CMAKE_ARG...]: configures and builds in Release the
# targets in $BENCH_TARGETS (default: ray-webhook ceiling_server review_bench).
# Uses the top-level project when its CMakeLists.txt adds bench/, and then builds
# the core profile-guided as scripts/build.sh does; else configures bench/ on its
# own (which pulls the project in). Output goes to LOG; on failure
# its errors are shown and it returns 1.
bench_build() {
  local build_dir="$1" log="$2" source_dir want
  shift 2
  if grep -Eq '^[[:space:]]*add_subdirectory\(bench\)' CMakeLists.txt; then source_dir=.; else source_dir=bench; fi
  want="$(cd "$source_dir" && pwd)"
  # A build dir configured from the other source dir cannot be reused as is.
  if [ -f "$build_dir/CMakeCache.txt" ] &&
     ! grep -qx "CMAKE_HOME_DIRECTORY:INTERNAL=$want" "$build_dir/CMakeCache.txt"; then
    rm -rf "$build_dir/CMakeCache.txt" "$build_dir/CMakeFiles"
  fi
  echo "bench: building Release in $build_dir (log: $log)" >&2
  local configure=(cmake -S "$source_dir" -B "$build_dir")
  # The core as it ships: profile-guided (scripts/build.sh does the same). The
  # script ends by configuring the build dir, so it replaces the plain configure.
  if [ "$source_dir" = . ] && [ -f scripts/build-with-profile.sh ]; then
    configure=(bash scripts/build-with-profile.sh "$build_dir")
  fi
  if ! { "${configure[@]}" -DCMAKE_BUILD_TYPE=Release \
           -DRAY_WEBHOOK_BUILD_BENCH=ON -DRAY_WEBHOOK_BUILD_TESTS=OFF "$@" &&
         cmake --build "$build_dir" -j"$(nproc)" --target ${BENCH_TARGETS:-ray-webhook ceiling_server review_bench}; } \
       >"$log" 2>&1; then
    grep -E 'error|Error' "$log" | head -20 >&2
    echo "bench: the build failed; see $log" >&2
    return 1
  fi
}

# bench_core_build BUILD_DIR: says how the core in BUILD_DIR was compiled, for the
# figures' headers ("core profile-guided" or "core without a profile").
bench_core_build() {
  if grep -qix 'RAY_WEBHOOK_PGO:STRING=use' "$1/CMakeCache.txt" 2>/dev/null; then
    echo "core profile-guided"
  else
    echo "core without a profile"
  fi
}

# bench_result_field NAME LINE: the value of NAME=... in the RESULT line that
# bench/post.lua makes wrk print (requests, seconds, rps, p50_us, p99_us, ...).
bench_result_field() { sed -n "s/.*[ ]$1=\([0-9.]*\).*/\1/p" <<<"$2"; }

# --smoke: each script runs its whole path at the smallest size, and checks each
# figure it prints with bench_smoke_check; bench_smoke_done then exits non-zero
# if any was wrong, so that a script broken by a renamed flag, a missing binary
# or an output it no longer parses fails its CTest test instead of printing blanks.
bench_smoke_failures=0

# bench_smoke_check WHAT VALUE [positive|zero|number]: VALUE must be a number,
# and above zero (positive, the default: requests/s, latencies, memory) or zero
# (errors, non-2xx answers); otherwise prints why and counts a failure.
bench_smoke_check() {
  local what="$1" value="$2" want="${3:-positive}" ok=true
  if ! [[ "$value" =~ ^[+-]?[0-9]+([.][0-9]+)?([eE][+-]?[0-9]+)?$ ]]; then
    ok=false
  elif [ "$want" = positive ]; then
    awk -v v="$value" 'BEGIN {exit !(v > 0)}' || ok=false
  elif [ "$want" = zero ]; then
    awk -v v="$value" 'BEGIN {exit !(v == 0)}' || ok=false
  fi
  if ! $ok; then
    echo "bench: smoke: FAIL: $what is '${value}', want $( [ "$want" = number ] && echo "a number" || echo "$want")" >&2
    bench_smoke_failures=$((bench_smoke_failures + 1))
  fi
  return 0
}

# bench_smoke_fail MESSAGE: counts a failure that is not one figure.
bench_smoke_fail() {
  echo "bench: smoke: FAIL: $*" >&2
  bench_smoke_failures=$((bench_smoke_failures + 1))
}

# bench_smoke_done NAME: at the end of a smoke run, exits 1 after any failure.
bench_smoke_done() {
  if [ "$bench_smoke_failures" -gt 0 ]; then
    echo "$1: smoke: $bench_smoke_failures check(s) failed" >&2
    exit 1
  fi
  echo "$1: smoke: ok" >&2
}
