#!/usr/bin/env bash
# The size of an image in an OCI archive, as a registry and a node see it:
#   scripts/image_sizes.sh ARCHIVE   prints "COMPRESSED UNPACKED" in bytes
# COMPRESSED is the sum of the manifest's gzip layers (what a registry stores
# and a node pulls), UNPACKED the sum of their tar bytes (what a node keeps).
# Used by tests/image/check.sh (the budget) and bench/image-size.sh.
set -euo pipefail
archive="${1:?usage: image_sizes.sh ARCHIVE}"
d="$(mktemp -d)"
trap 'rm -rf "$d"' EXIT
tar -xf "$archive" -C "$d"
manifest="$d/blobs/sha256/$(jq -r '.manifests[0].digest' "$d/index.json" | cut -d: -f2)"
compressed=0
unpacked=0
while read -r digest size; do
  compressed=$((compressed + size))
  unpacked=$((unpacked + $(gzip -dc "$d/blobs/sha256/${digest#sha256:}" | wc -c)))
done < <(jq -r '.layers[] | "\(.digest) \(.size)"' "$manifest")
echo "$compressed $unpacked"
