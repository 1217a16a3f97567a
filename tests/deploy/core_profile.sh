#!/usr/bin/env bash
# The build that ships compiles the core with a profile of the review fixtures
# (scripts/build.sh through scripts/build-with-profile.sh;
# bench/journal/29-profile-guided-core.md). Checks the build dir CTest runs in: configured with
# RAY_WEBHOOK_PGO=use, the core's sources compiled with -fprofile-use, and a
# profile recorded for each core and logging source a review runs through.
#   core_profile.sh BUILD_DIR
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
build="${1:?usage: core_profile.sh BUILD_DIR}"
need jq "install jq"

mode="$(sed -n 's/^RAY_WEBHOOK_PGO:STRING=//p' "$build/CMakeCache.txt" 2>/dev/null | tr '[:upper:]' '[:lower:]')"
if [ "$mode" = use ]; then pass "configured with RAY_WEBHOOK_PGO=use"
else fail "configured with RAY_WEBHOOK_PGO=use (got '${mode:-none}'; build with scripts/build.sh)"; fi

for source in core/decode/review_decoder core/review/review_handler core/review/pod_policy core/pod/fqdn_mutation \
  core/review/admission_response logging/review_log_line; do
  if jq -r --arg f "/src/$source.cpp" '.[] | select(.file | endswith($f)) | .command' \
       "$build/compile_commands.json" 2>/dev/null | grep -- '-fprofile-use' >/dev/null; then
    pass "src/$source.cpp compiled with -fprofile-use"
  else
    fail "src/$source.cpp compiled with -fprofile-use"
  fi
  layer="${source%/*}"  # its layer's folder; core/review is the library ray_webhook_core_review
  layer="${layer//\//_}"
  profile=("$build"/pgo-profile/*"#ray_webhook_${layer}.dir#src#${source//\//#}.cpp.gcda")
  if [ -s "${profile[0]}" ]; then pass "a profile of src/$source.cpp was recorded"
  else fail "a profile of src/$source.cpp was recorded (none in $build/pgo-profile)"; fi
done
finish
