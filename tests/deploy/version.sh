#!/usr/bin/env bash
# One version: CMakeLists.txt's project() version (what `ray-webhook --version`
# prints and scripts/image.sh tags the image with) is the chart's appVersion,
# the image of deploy/'s Deployment, and every `ray-webhook:X.Y.Z` the
# documents and the Dockerfile name.
#   tests/deploy/version.sh [--server BINARY] [--repo DIR]
set -uo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
server=""
while [ $# -gt 0 ]; do
  case "$1" in
    --server) server="$2"; shift 2 ;;
    --repo) repo="$2"; shift 2 ;;
    *) echo "version.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
passed=0
failed=0
check() { # check WHAT GOT
  if [ "$2" = "$version" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL $1: $2, not $version"; fi
}
version="$(sed -n 's/^project(ray-webhook VERSION \([0-9][0-9.]*\) .*/\1/p' "$repo/CMakeLists.txt")"
if [ -z "$version" ]; then echo "FAIL no version in CMakeLists.txt's project()"; echo "0 passed, 1 failed"; exit 1; fi
check "charts/ray-webhook/Chart.yaml appVersion" "$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$repo/charts/ray-webhook/Chart.yaml")"
check "deploy/base/deployment.yaml image" "$(sed -n 's/^ *image: *ray-webhook:\(.*\)$/\1/p' "$repo/deploy/base/deployment.yaml")"
if [ -n "$server" ]; then
  check "ray-webhook --version" "$("$server" --version 2>&1 | sed -n 's/^ray-webhook \(.*\)$/\1/p' | head -1)"
fi
# Any other place that names the image with a version (tests use other
# versions on purpose: not searched).
while IFS=: read -r file line text; do
  v="$(grep -o 'ray-webhook:[0-9][0-9.]*[0-9]' <<<"$text" | head -1)"
  check "$file:$line" "${v#ray-webhook:}"
done < <(cd "$repo" && git ls-files -- README.md docs deploy charts Dockerfile 2>/dev/null \
  | xargs -r grep -n -o 'ray-webhook:[0-9][0-9.]*[0-9]' 2>/dev/null)
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
