#!/usr/bin/env bash
# The core builds with its own include path only, so that it cannot reach an
# edge: each public header of the other layers, included from a file compiled
# as the core's top part (core/review, which links every other part) is, must
# fail to compile for want of the header, and each public header of every part
# of the core must compile. No source or header may reach around the include
# path with a relative "../" include, and none includes nlohmann/json, which is
# the audit's and the command line's I/O, not the core's (it is a system
# header, so the include path alone would not keep it out). (Between the
# parts: core_parts_are_layered.py.)
#   core_is_pure.sh CXX SOURCE_DIR INCLUDE_DIR...   (core/review's include directories)
set -uo pipefail
# shellcheck source=../deploy/lib.sh
source "$(dirname "$0")/../deploy/lib.sh"
cxx="$1" src="$2"
shift 2
flags=(-std=c++20 -fsyntax-only)
for d in "$@"; do flags+=("-I$d"); done
probe="$(mktemp --suffix=.cpp)"
trap 'rm -f "$probe"' EXIT

for h in "$src"/include/ray_webhook/core/*/*.h; do
  rel="${h#"$src"/include/}"
  printf '#include "%s"\n' "$rel" >"$probe"
  if out="$("$cxx" "${flags[@]}" "$probe" 2>&1)"; then pass "the core sees $rel"
  else fail "the core sees $rel: $(head -3 <<<"$out")"; fi
done
for h in "$src"/include/ray_webhook/*/*.h; do
  layer="$(basename "$(dirname "$h")")"
  [ "$layer" = core ] && continue
  rel="ray_webhook/$layer/$(basename "$h")"
  printf '#include "%s"\n' "$rel" >"$probe"
  out="$("$cxx" "${flags[@]}" "$probe" 2>&1)"
  if grep -q "$rel: No such file or directory" <<<"$out"; then pass "the core cannot include $rel"
  else fail "the core cannot include $rel (compiler said: $(head -3 <<<"${out:-nothing, it compiled}"))"; fi
done
relative="$(grep -rn '#include "\.\./' "$src/src" "$src/include" 2>/dev/null)"
if [ -z "$relative" ]; then pass "no relative includes in src/ and include/"
else fail "relative includes reach around the layers: $relative"; fi
nlohmann="$(grep -rn '#include <nlohmann' "$src/src/core" "$src/include/ray_webhook/core" 2>/dev/null)"
if [ -z "$nlohmann" ]; then pass "no nlohmann/json in the core"
else fail "nlohmann/json in the core: $nlohmann"; fi
finish
