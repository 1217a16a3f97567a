#!/usr/bin/env bash
# tests/image/check.sh fails, on the check named, for each of a list of
# deliberate mistakes, each made on a copy of the built image (as a wrong
# Dockerfile would have made it, or a registry would serve it):
#   tests/image/mistakes.sh [ARCHIVE] --registry REPOSITORY --key COSIGN_PUB [--ca-file CA]
# The registry, with ARCHIVE pushed and signed there (tests/image/signed.sh
# makes one), is for the last mistake: an image pushed under the same tag
# with the signature of another digest. Without --registry that mistake
# fails, as not made.
# Prints one PASS or FAIL line per mistake, then "N passed, M failed".
set -uo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
version="$(sed -n 's/^project(ray-webhook VERSION \([0-9][0-9.]*\) .*/\1/p' "$repo/CMakeLists.txt")"
archive=""
registry_args=()
registry=""
ca_file=""
while [ $# -gt 0 ]; do
  case "$1" in
    --registry) registry="$2"; registry_args+=("$1" "$2"); shift 2 ;;
    --key) registry_args+=("$1" "$2"); shift 2 ;;
    --ca-file) ca_file="$2"; registry_args+=("$1" "$2"); shift 2 ;;
    *) archive="$1"; shift ;;
  esac
done
archive="${archive:-$repo/build/image/ray-webhook-$version.oci.tar}"
base="${archive%.oci.tar}"
work="$(mktemp -d)"
trap 'rm -rf "$work"; buildah rm "mistake-$$" >/dev/null 2>&1' EXIT
passed=0
failed=0
# mistake NAME EXPECTED_FAILING_CHECK CHANGE... [-- PUBLISH]: CHANGE runs with
# $ctr and $root of a copy; PUBLISH, with $copy (the archive's stem), before
# check.sh (with the registry's arguments when PUBLISH is given).
mistake() {
  local name="$1" expect="$2" ctr="mistake-$$" root copy="$work/$1" publish="" check_args=()
  shift 2
  if [ "${2:-}" = "--" ]; then publish="$3"; check_args=("${registry_args[@]}"); fi
  buildah from --quiet --name "$ctr" "oci-archive:$archive" >/dev/null
  root="$(buildah mount "$ctr")"
  ctr="$ctr" root="$root" bash -c "$1"
  buildah umount "$ctr" >/dev/null
  buildah commit --quiet --disable-compression=false "$ctr" "oci-archive:$copy.oci.tar" >/dev/null
  buildah rm "$ctr" >/dev/null
  cp "$base.spdx.json" "$copy.spdx.json"
  cp "$base.revision" "$copy.revision"
  skopeo inspect --format '{{.Digest}}' "oci-archive:$copy.oci.tar" >"$copy.digest"
  [ -z "$publish" ] || copy="$copy" bash -c "$publish" >"$copy.publish" 2>&1 \
    || { failed=$((failed + 1)); echo "FAIL $name: not made: $(tail -3 "$copy.publish")"; rm -f "$copy".*; return; }
  bash "$repo/tests/image/check.sh" "$copy.oci.tar" "${check_args[@]}" >"$copy.out" 2>&1
  if grep -q "^FAIL $expect" "$copy.out"; then
    passed=$((passed + 1)); echo "PASS $name: fails \"$expect\""
  else
    failed=$((failed + 1)); echo "FAIL $name: \"$expect\" did not fail:"; sed 's/^/    /' "$copy.out"
  fi
  rm -f "$copy".*
}
mistake "runs as root" "user is numeric and not root" 'buildah config --user 0:0 "$ctr"'
mistake "entrypoint without the certificate folder" "entrypoint is ray-webhook serve --cert-dir" \
  "buildah config --entrypoint '[\"ray-webhook\", \"serve\"]' \"\$ctr\""
mistake "a library left out" "every library of the binary is found" \
  'rm "$root"/usr/lib/x86_64-linux-gnu/libsimdjson.so.*'
mistake "the binary not executable by its user" "ray-webhook --version as" 'chmod 0700 "$root/usr/local/bin/ray-webhook"'
mistake "a shell left in" "no shell and no package manager" 'mkdir -p "$root/bin" && cp /bin/dash "$root/bin/sh"'
mistake "a file no record lists" "the image holds nothing but" 'cp /usr/bin/env "$root/usr/local/bin/env"'
mistake "a library changed after its record" "every listed file is in the image with its checksum" \
  'printf x >>"$root"/usr/lib/x86_64-linux-gnu/libfmt.so.9'
mistake "a package's record left out" "each of the [0-9]* libraries it loads belongs to a package's record" \
  'rm "$root"/var/lib/dpkg/status.d/libssl3 "$root"/var/lib/dpkg/status.d/libssl3.md5sums'
mistake "twice the budget" "unpacked" 'head -c 9000000 /dev/urandom >"$root/usr/local/bin/ballast"'
# The tampered tag: the same image with one label more (another digest), pushed
# under the image's tag, the original's signature copied to the copy's
# signature tag (cosign's sha256-DIGEST.sig): a signature whose claim names
# another digest than the image it is attached to.
if [ -n "$registry" ]; then
  certs="$work/certs.d"
  mkdir -p "$certs"
  [ -z "$ca_file" ] || cp "$ca_file" "$certs/ca.crt"
  export certs registry version original="$(cat "$base.digest")"
  mistake "a signature of another digest" "cosign verify" 'buildah config --label tampered=true "$ctr"' -- \
    'skopeo copy --quiet --preserve-digests --dest-cert-dir "$certs" "oci-archive:$copy.oci.tar" "docker://$registry:$version" \
     && skopeo copy --quiet --src-cert-dir "$certs" --dest-cert-dir "$certs" \
          "docker://$registry:${original/:/-}.sig" "docker://$registry:$(sed "s/:/-/" "$copy.digest").sig"'
  # The tag back on the image itself.
  skopeo copy --quiet --preserve-digests --dest-cert-dir "$certs" "oci-archive:$archive" "docker://$registry:$version"
else
  failed=$((failed + 1)); echo "FAIL a signature of another digest: not made (no --registry; tests/image/signed.sh gives one)"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
