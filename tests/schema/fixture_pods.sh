#!/usr/bin/env bash
# Every Pod in the fixtures, as sent and as expected after the webhook's patch,
# must be valid against the Kubernetes Pod schema: the patched Pods are the ones
# the replay proves the server produces.
set -euo pipefail
fixtures="$1"
here="$(cd "$(dirname "$0")" && pwd)"
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
jq -s '[.[] | .request | select(.kind.kind == "Pod") | (.object, .oldObject) | select(. != null)]' \
  "$fixtures"/reviews/*.json >"$tmp"
exec "$here/run.sh" "$tmp" "$fixtures"/expected/*.pod.json
