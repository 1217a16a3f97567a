#!/usr/bin/env bash
# The shipped binary is built small (CMakeLists.txt, "A small binary";
# bench/journal/31-smaller-binary.md). Checks the build dir CTest runs in: the start-up
# sources compiled with -Os, the per-request sources not, every source of the
# core and the server in its own function sections, and the binary linked
# with --gc-sections.
#   compact_binary.sh BUILD_DIR
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
build="${1:?usage: compact_binary.sh BUILD_DIR}"
need jq "install jq"

# The compile command of src/LAYER/NAME.cpp, empty when there is none.
command_of() {
  jq -r --arg f "/src/$1.cpp" '.[] | select(.file | endswith($f)) | .command' \
    "$build/compile_commands.json" 2>/dev/null | head -1
}
# The optimisation level that wins: the last -O flag of the command.
last_opt() { grep -o -- ' -O[0-9sgz]*' <<<"$1" | tail -1 | tr -d ' '; }

for source in cli/main cli/command_line kube/kube_api_client tls/serving_certificate tls/tls_policy; do
  opt="$(last_opt "$(command_of "$source")")"
  if [ "$opt" = -Os ]; then pass "src/$source.cpp compiled with -Os"
  else fail "src/$source.cpp compiled with -Os (last -O flag: '${opt:-none}')"; fi
done
for source in core/review/review_handler core/decode/review_decoder server/webhook_server server/route \
  http/http_session http/answer_writer net/connection net/event_loop logging/batched_log_sink \
  logging/log_line_formatter logging/review_log_line server/metrics; do
  cmd="$(command_of "$source")"
  opt="$(last_opt "$cmd")"
  if [ -n "$cmd" ] && [ "$opt" != -Os ]; then pass "src/$source.cpp keeps its optimisation ($opt)"
  else fail "src/$source.cpp keeps its optimisation (last -O flag: '${opt:-none}')"; fi
  if grep -q -- '-ffunction-sections' <<<"$cmd"; then pass "src/$source.cpp in function sections"
  else fail "src/$source.cpp in function sections"; fi
done
if grep -q -- '--gc-sections' "$build/CMakeFiles/ray-webhook.dir/link.txt" 2>/dev/null; then
  pass "ray-webhook linked with --gc-sections"
else
  fail "ray-webhook linked with --gc-sections"
fi
finish
