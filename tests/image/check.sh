#!/usr/bin/env bash
# Checks the image scripts/image.sh built, from its OCI archive:
#   tests/image/check.sh [ARCHIVE] [--registry REPOSITORY --key COSIGN_PUB [--ca-file CA]]
#   (ARCHIVE defaults to build/image/ray-webhook-VERSION.oci.tar)
# its labels, user and entrypoint; that its binary runs inside it as its user
# with every library found through the image's own loader; that it holds
# nothing but the binary, the files its Debian packages' records list (with
# their checksums), its users and the records themselves; its size; that the
# digest file is the archive's; and that the bill of materials lists exactly
# the image's Debian packages with their versions, and ray-webhook's own.
# With --registry (where scripts/image.sh --push put it) and --key: that
# `cosign verify` with that public key passes for the archive's digest there,
# and `cosign verify-attestation` for its SBOM and provenance (cosign is
# $COSIGN, default tests/e2e/.bin/cosign).
# Prints one PASS or FAIL line per check, then "N passed, M failed".
set -uo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
version="$(sed -n 's/^project(ray-webhook VERSION \([0-9][0-9.]*\) .*/\1/p' "$repo/CMakeLists.txt")"
archive=""
registry=""
key=""
ca_file=""
while [ $# -gt 0 ]; do
  case "$1" in
    --registry) registry="$2"; shift 2 ;;
    --key) key="$2"; shift 2 ;;
    --ca-file) ca_file="$2"; shift 2 ;;
    *) archive="$1"; shift ;;
  esac
done
archive="${archive:-$repo/build/image/ray-webhook-$version.oci.tar}"
base="${archive%.oci.tar}"
# The image's budget (bench/image-size.sh measures it beside the Go peer's).
max_unpacked=$((20 * 1000 * 1000))
max_compressed=$((8 * 1000 * 1000))
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
check "the user and its group are named in the image's /etc/passwd and /etc/group" \
  bash -c 'grep -q "^[^:]*:x:${1%%:*}:${1#*:}:" "$2/etc/passwd" && grep -q "^[^:]*:x:${1#*:}:" "$2/etc/group"' _ "$user" "$root"
entrypoint="$(jq -r '.OCIv1.config.Entrypoint | join(" ")' "$work/inspect.json")"
check "entrypoint is ray-webhook serve --cert-dir (as deploy/ expects)" \
  bash -c '[[ "$1" == "ray-webhook serve --cert-dir "/* ]]' _ "$entrypoint"
image_path="$(jq -r '.OCIv1.config.Env[] | select(startswith("PATH=")) | .[5:]' "$work/inspect.json")"
check "the entrypoint's program is in the image's PATH ($image_path)" \
  bash -c 'IFS=: read -r -a dirs <<<"$2"; for d in "${dirs[@]}"; do [ -x "$1$d/ray-webhook" ] && exit 0; done; exit 1' _ "$root" "$image_path"
out="$(env -i PATH="$image_path" "$(command -v chroot)" --userspec="$user" "$root" ray-webhook --version 2>&1)"
check "ray-webhook --version as $user inside the image: $out" [ "$out" = "ray-webhook $version" ]
# The binary's loader is the image's own (PT_INTERP); it lists what it loads.
interp="$(readelf -l "$root/usr/local/bin/ray-webhook" 2>/dev/null | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')"
chroot "$root" "$interp" --list /usr/local/bin/ray-webhook >"$work/loaded" 2>&1 \
  || echo "not found: $interp --list failed: $(head -c 300 "$work/loaded")" >>"$work/loaded"
missing="$(grep 'not found' "$work/loaded")"
check "every library of the binary is found in the image by its own loader ($interp)${missing:+: $missing}" \
  bash -c '[ -n "$2" ] && [ -z "$3" ] && [ -s "$1" ]' _ "$work/loaded" "$interp" "$missing"

# Nothing but what the records name: every file is the binary, a file some
# package's .md5sums lists (and its checksum holds), a record, a copyright
# file, or the users, groups and name-service files.
status_d="$root/var/lib/dpkg/status.d"
(cd "$root" && find . \( -type f -o -type l \) ! -type d -printf '%P\n' | sort) >"$work/files"
cat "$status_d"/*.md5sums 2>/dev/null | awk '{print $2}' | sort >"$work/listed"
grep -v -E '^(usr/local/bin/ray-webhook|etc/(passwd|group|nsswitch\.conf)|var/lib/dpkg/status\.d/[^/]+|usr/share/doc/[^/]+/copyright|lib|lib64|var/run|usr/lib64/ld-linux-x86-64\.so\.2)$' \
  "$work/files" | sort >"$work/other"
extra="$(comm -23 "$work/other" "$work/listed" | head -5 | tr '\n' ' ')"
check "the image holds nothing but the binary, its packages' listed files and records, and its users${extra:+: also $extra}" [ -z "$extra" ]
sums_ok="$(cd "$root" && cat var/lib/dpkg/status.d/*.md5sums 2>/dev/null | md5sum -c --quiet 2>&1 | head -3)"
check "every listed file is in the image with its checksum${sums_ok:+: $sums_ok}" \
  bash -c '[ -s "$1" ] && [ -z "$2" ]' _ "$work/listed" "$sums_ok"
unlisted=""
loaded=0
while read -r lib; do
  loaded=$((loaded + 1))
  grep -qx "${lib#/}" "$work/listed" || unlisted+="$lib "
done < <(awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}' "$work/loaded" | xargs -r -n1 sh -c 'cd "$0" && readlink -f "./$1" | sed "s|^$0||"' "$root" 2>/dev/null)
check "each of the $loaded libraries it loads belongs to a package's record (what CVE scanners read)${unlisted:+: not $unlisted}" \
  [ "$loaded" -gt 0 -a -z "$unlisted" ]
found=""
for forbidden in bin/sh bin/bash usr/bin/sh usr/bin/dpkg usr/bin/apt; do
  [ -e "$root/$forbidden" ] && found+="$forbidden "
done
check "no shell and no package manager${found:+: $found}" [ -z "$found" ]

# sizes: the compressed layers (what a registry stores and a node pulls) and their tar bytes.
read -r compressed unpacked < <(bash "$repo/scripts/image_sizes.sh" "$archive") || { compressed=0; unpacked=0; }
check "unpacked $unpacked bytes (at most $max_unpacked), compressed $compressed (at most $max_compressed)" \
  bash -c '[ "$1" -gt 0 ] && [ "$1" -le "$2" ] && [ "$3" -le "$4" ]' _ "$unpacked" "$max_unpacked" "$compressed" "$max_compressed"
digest="$(skopeo inspect --format '{{.Digest}}' "oci-archive:$archive")"
check "the digest file is the archive's" [ "$(cat "$base.digest" 2>/dev/null)" = "$digest" ]

# The bill of materials against the image's own records.
sbom="$base.spdx.json"
if jq -e '.spdxVersion == "SPDX-2.3" and .dataLicense == "CC0-1.0"' "$sbom" >/dev/null 2>&1; then
  pass "the bill of materials is an SPDX 2.3 document"
else
  fail "the bill of materials $sbom is not an SPDX 2.3 document"
fi
check "it describes ray-webhook $version" \
  [ "$(jq -r '.packages[] | select(.SPDXID == "SPDXRef-Package-ray-webhook") | .versionInfo' "$sbom")" = "$version" ]
for record in "$status_d"/*; do
  case "$record" in *.md5sums) continue ;; esac
  sed -n 's/^Package: //p; s/^Version: //p' "$record" | paste -sd' '
done | sort >"$work/records"
jq -r '.packages[] | select(.SPDXID | startswith("SPDXRef-Deb-")) | "\(.name) \(.versionInfo)"' "$sbom" | sort >"$work/sbom-deb"
check "it lists the image's $(wc -l <"$work/records") Debian packages, each with its version" \
  bash -c '[ -s "$1" ] && diff -u "$1" "$2"' _ "$work/records" "$work/sbom-deb"

# The signature and attestations in the registry, for this archive's digest.
if [ -n "$registry" ]; then
  cosign="${COSIGN:-$repo/tests/e2e/.bin/cosign}"
  ref="$registry@$digest"
  cosign_env=()
  [ -z "$ca_file" ] || cosign_env=(SSL_CERT_FILE="$ca_file")
  if out="$(env "${cosign_env[@]}" "$cosign" verify --key "$key" --insecure-ignore-tlog=true "$ref" 2>&1)"; then
    pass "cosign verify: $registry holds a signature of $digest by $key"
  else
    fail "cosign verify of $ref with $key: $(tail -2 <<<"$out" | tr '\n' ' ')"
  fi
  for type in spdxjson slsaprovenance1; do
    if out="$(env "${cosign_env[@]}" "$cosign" verify-attestation --key "$key" --insecure-ignore-tlog=true --type "$type" "$ref" 2>&1 >/dev/null)"; then
      pass "cosign verify-attestation --type $type of $digest"
    else
      fail "cosign verify-attestation --type $type of $ref: $(tail -2 <<<"$out" | tr '\n' ' ')"
    fi
  done
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
