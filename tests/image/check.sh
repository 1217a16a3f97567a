#!/usr/bin/env bash
# Checks the image scripts/image.sh built, from its OCI archive:
#   tests/image/check.sh [ARCHIVE]   (default build/image/ray-webhook-VERSION.oci.tar)
# its labels, user and entrypoint; that its binary runs inside it as its user
# with every library found; that the digest file is the archive's; and that
# the bill of materials lists exactly the image's Debian packages and bundled
# libraries, with their versions, and ray-webhook's own version.
# Prints one PASS or FAIL line per check, then "N passed, M failed".
set -uo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
version="$(sed -n 's/^project(ray-webhook VERSION \([0-9][0-9.]*\) .*/\1/p' "$repo/CMakeLists.txt")"
archive="${1:-$repo/build/image/ray-webhook-$version.oci.tar}"
base="${archive%.oci.tar}"
passed=0
failed=0
pass() { passed=$((passed + 1)); echo "PASS $1"; }
fail() { failed=$((failed + 1)); echo "FAIL $1"; }
check() { local what="$1"; shift; if "$@"; then pass "$what"; else fail "$what"; fi; }

[ -f "$archive" ] || { echo "FAIL no image archive $archive (scripts/image.sh builds it)"; echo "0 passed, 1 failed"; exit 1; }
work="$(mktemp -d)"
ctr="image-check-$$"
cleanup() { buildah umount "$ctr" >/dev/null 2>&1; buildah rm "$ctr" >/dev/null 2>&1; rm -rf "$work"; }
trap cleanup EXIT
buildah from --quiet --name "$ctr" "oci-archive:$archive" >/dev/null || { echo "FAIL buildah cannot read $archive"; echo "0 passed, 1 failed"; exit 1; }
root="$(buildah mount "$ctr")"
buildah inspect --type container "$ctr" >"$work/inspect.json"
label() { jq -r --arg k "$1" '.OCIv1.config.Labels[$k] // ""' "$work/inspect.json"; }

check "label version is $version" [ "$(label org.opencontainers.image.version)" = "$version" ]
check "label revision is the commit it was built from" \
  [ "$(label org.opencontainers.image.revision)" = "$(cat "$base.revision" 2>/dev/null)" ]
check "labels source and licenses are set" test -n "$(label org.opencontainers.image.source)" -a -n "$(label org.opencontainers.image.licenses)"
user="$(jq -r '.OCIv1.config.User // ""' "$work/inspect.json")"
check "user is numeric and not root ($user)" bash -c '[[ "$1" =~ ^[0-9]+:[0-9]+$ ]] && [ "${1%%:*}" != 0 ]' _ "$user"
entrypoint="$(jq -r '.OCIv1.config.Entrypoint | join(" ")' "$work/inspect.json")"
check "entrypoint is ray-webhook serve --cert-dir (as deploy/ expects)" \
  bash -c '[[ "$1" == "ray-webhook serve --cert-dir "/* ]]' _ "$entrypoint"
check "the entrypoint's program is in the image's PATH" \
  bash -c 'for d in /usr/local/sbin /usr/local/bin /usr/sbin /usr/bin /sbin /bin; do [ -x "$1$d/ray-webhook" ] && exit 0; done; exit 1' _ "$root"
out="$(chroot --userspec="$user" "$root" ray-webhook --version 2>&1)"
check "ray-webhook --version as $user inside the image: $out" [ "$out" = "ray-webhook $version" ]
missing="$(chroot "$root" ldd /usr/local/bin/ray-webhook 2>&1 | grep 'not found')"
check "every library of the binary is found in the image${missing:+: $missing}" [ -z "$missing" ]
check "the digest file is the archive's" \
  [ "$(cat "$base.digest" 2>/dev/null)" = "$(skopeo inspect --format '{{.Digest}}' "oci-archive:$archive")" ]

# The bill of materials against the image's own files.
sbom="$base.spdx.json"
if jq -e '.spdxVersion == "SPDX-2.3" and .dataLicense == "CC0-1.0"' "$sbom" >/dev/null 2>&1; then
  pass "the bill of materials is an SPDX 2.3 document"
else
  fail "the bill of materials $sbom is not an SPDX 2.3 document"
fi
check "it describes ray-webhook $version" \
  [ "$(jq -r '.packages[] | select(.SPDXID == "SPDXRef-Package-ray-webhook") | .versionInfo' "$sbom")" = "$version" ]
dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${db:Status-Status} ${Package} ${Version}\n' \
  | awk '$1 == "installed" {print $2, $3}' | sort >"$work/dpkg"
jq -r '.packages[] | select(.SPDXID | startswith("SPDXRef-Deb-")) | "\(.name) \(.versionInfo)"' "$sbom" | sort >"$work/sbom-deb"
check "it lists the image's $(wc -l <"$work/dpkg") Debian packages, each with its version" diff -u "$work/dpkg" "$work/sbom-deb"
(cd "$root/usr/local/lib/ray-webhook" && ls) | sort >"$work/libs"
jq -r '.packages[] | select(.SPDXID | startswith("SPDXRef-Bundled-")) | .comment' "$sbom" \
  | sed -n 's|^/usr/local/lib/ray-webhook/\([^,]*\),.*|\1|p' | sort >"$work/sbom-libs"
check "it lists the $(wc -l <"$work/libs") bundled libraries, each with the package it came from" diff -u "$work/libs" "$work/sbom-libs"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
