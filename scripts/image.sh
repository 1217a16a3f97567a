#!/usr/bin/env bash
# Builds the container image users install, without a Docker engine:
#   scripts/image.sh            the base (cached), the image, its OCI archive,
#                               digest and software bill of materials
#   scripts/image.sh --base     only the Debian 12 base
#   scripts/image.sh --push REGISTRY [--archive FILE] [--ca-file CA] [--sign KEY]
#                               push the archive (default this version's) to
#                               REGISTRY/ray-webhook:VERSION, digest unchanged,
#                               and print REGISTRY/ray-webhook@DIGEST; with
#                               --sign, cosign signs that digest with KEY (a
#                               cosign key file, its password in COSIGN_PASSWORD)
#                               and attaches the SBOM and the provenance as
#                               attestations, with no transparency log. cosign
#                               is $COSIGN, else tests/e2e/.bin/cosign
#                               (scripts/e2e.sh --build builds it), else PATH's.
# 1. The base: debootstrap --variant=minbase bookworm from Debian's packages,
#    pruned of logs, caches and per-machine files, every mtime clamped to the
#    commit's time, imported as localhost/debian:bookworm-slim. Cached in
#    build/image/base/ (rebuilt when this script's base recipe changes).
# 2. The image: the shipped Dockerfile, unchanged, built by buildah
#    (--isolation chroot) from a clean export of HEAD (git archive), with
#    --timestamp set to the commit's time (SOURCE_DATE_EPOCH) so two builds of
#    one commit give one digest, and the OCI labels version, revision, source
#    and licenses.
# 3. build/image/ray-webhook-VERSION.oci.tar, .digest (the manifest's
#    sha256), .spdx.json (SPDX 2.3: ray-webhook and the Debian packages its
#    files came from, as the image's var/lib/dpkg/status.d records them),
#    .provenance.json (an SLSA v1 provenance predicate: the commit, the
#    Dockerfile, the Debian archive's date the base was made from, the
#    builder) and .revision; an archive of the same commit is reused
#    (IMAGE_REBUILD=1 to build it again).
# IMAGE_BINARY=build/ray-webhook hands the Dockerfile (BINARY=context) a binary
# that scripts/build.sh has just built from this work tree, instead of
# compiling it again inside the build (scripts/test.sh does so); used only
# when the tree's sources are the commit's, else the image builds from source.
# IMAGE_SOURCE and IMAGE_LICENSES set those two labels (the project names
# no public repository or license of its own yet: NOASSERTION, as SPDX says).
# VERSION is the project's one version (CMakeLists.txt's project()); needs
# root, buildah, debootstrap and skopeo (installed with apt-get when missing).
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
out="$repo/build/image"
base_only=0
push=""
push_archive=""
ca_file=""
sign_key=""
while [ $# -gt 0 ]; do
  case "$1" in
    --base) base_only=1; shift ;;
    --push) push="${2:?--push needs a registry}"; shift 2 ;;
    --archive) push_archive="${2:?}"; shift 2 ;;
    --ca-file) ca_file="${2:?}"; shift 2 ;;
    --sign) sign_key="${2:?}"; shift 2 ;;
    *) echo "image.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done

log() { printf '%s image: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "$*"; exit 1; }

missing=()
for t in buildah:buildah debootstrap:debootstrap skopeo:skopeo python3:python3 jq:jq; do
  command -v "${t%%:*}" >/dev/null || missing+=("${t#*:}")
done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
    || { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null; } \
    || die "could not install ${missing[*]}"
fi

version="$(sed -n 's/^project(ray-webhook VERSION \([0-9][0-9.]*\) .*/\1/p' CMakeLists.txt)"
[ -n "$version" ] || die "no version in CMakeLists.txt's project()"
revision="$(git rev-parse HEAD)"
epoch="$(git log -1 --format=%ct HEAD)"
export SOURCE_DATE_EPOCH="$epoch"
mkdir -p "$out/base"

# ---------------------------------------------------------------- push
# push_image ARCHIVE: to $push/ray-webhook:VERSION, then signed and attested.
push_image() {
  local archive="$1" digest ref certs cosign
  local stem="${archive%.oci.tar}"
  digest="$(cat "$stem.digest" 2>/dev/null)" || die "no $stem.digest beside $archive"
  certs="$(mktemp -d)"
  [ -z "$ca_file" ] || cp "$ca_file" "$certs/ca.crt"
  skopeo copy --quiet --preserve-digests --dest-cert-dir "$certs" \
    "oci-archive:$archive" "docker://$push/ray-webhook:$version" >&2 || die "skopeo copy to $push failed"
  local pushed
  pushed="$(skopeo inspect --cert-dir "$certs" --format '{{.Digest}}' "docker://$push/ray-webhook@$digest")" \
    || die "$push does not serve ray-webhook@$digest after the push"
  rm -rf "$certs"
  [ "$pushed" = "$digest" ] || die "$push serves $pushed, not $digest"
  ref="$push/ray-webhook@$digest"
  log "pushed $ref (tag $version)"
  if [ -n "$sign_key" ]; then
    cosign="${COSIGN:-$repo/tests/e2e/.bin/cosign}"
    [ -x "$cosign" ] || cosign="$(command -v cosign)" || die "no cosign (COSIGN, tests/e2e/.bin/cosign or PATH)"
    local -a cosign_env=(COSIGN_PASSWORD="${COSIGN_PASSWORD:-}")
    [ -z "$ca_file" ] || cosign_env+=(SSL_CERT_FILE="$ca_file")
    env "${cosign_env[@]}" "$cosign" sign --yes --key "$sign_key" --tlog-upload=false "$ref" >&2 \
      || die "cosign sign $ref failed"
    env "${cosign_env[@]}" "$cosign" attest --yes --key "$sign_key" --tlog-upload=false --type spdxjson \
      --predicate "$stem.spdx.json" "$ref" >&2 || die "cosign attest (SBOM) $ref failed"
    env "${cosign_env[@]}" "$cosign" attest --yes --key "$sign_key" --tlog-upload=false --type slsaprovenance1 \
      --predicate "$stem.provenance.json" "$ref" >&2 || die "cosign attest (provenance) $ref failed"
    log "signed $ref, SBOM and provenance attached"
  fi
  echo "$ref"
}
if [ -n "$push" ]; then
  push_image "${push_archive:-$out/ray-webhook-$version.oci.tar}"
  exit 0
fi

# ---------------------------------------------------------------- the base
suite=bookworm
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
base_tag=localhost/debian:bookworm-slim
# The recipe: what the base is made from; a change rebuilds it.
base_recipe="$( { echo "$suite $mirror"; dpkg-query -W -f '${Version}' debootstrap; sed -n '/^make_base() {/,/^}/p' "$0"; } | sha256sum | cut -c1-16)"
make_base() {
  local root="$out/base/rootfs"
  rm -rf "$root"
  log "debootstrap --variant=minbase $suite ($mirror)"
  debootstrap --variant=minbase "$suite" "$root" "$mirror" >"$out/base/debootstrap.log" 2>&1 \
    || { tail -20 "$out/base/debootstrap.log" >&2; die "debootstrap failed"; }
  # What differs from one run to the next and no program needs: logs, the
  # package lists and caches, dpkg's backups, ldconfig's stat cache, the
  # machine's identity. (The official slim images drop the same.)
  # Every time in the base is the Debian archive's own date (its Release
  # file's), so two bases made from one archive state are one.
  local base_epoch archive_date
  archive_date="$(cat "$root"/var/lib/apt/lists/*Release 2>/dev/null | sed -n 's/^Date: //p' | head -1)"
  [ -n "$archive_date" ] || die "no Date in the archive's Release file"
  base_epoch="$(date -d "$archive_date" +%s)"
  echo "$base_epoch" >"$out/base/epoch"
  rm -rf "$root"/var/log/* "$root"/var/cache/apt/* "$root"/var/lib/apt/lists/* \
    "$root"/var/cache/debconf/*-old "$root"/var/lib/dpkg/*-old "$root"/var/cache/ldconfig/aux-cache \
    "$root"/debootstrap "$root"/tmp/* "$root"/var/tmp/* "$root"/usr/share/doc/*/changelog* \
    "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*
  : >"$root/etc/machine-id"
  rm -f "$root/var/lib/dbus/machine-id" "$root/etc/resolv.conf" "$root/etc/hostname"
  # shadow's "last changed" day is the day debootstrap ran.
  sed -i -E "s/^([^:]*:[^:]*:)[0-9]+:/\1$((base_epoch / 86400)):/" "$root/etc/shadow"
  [ ! -f "$root/etc/shadow-" ] || sed -i -E "s/^([^:]*:[^:]*:)[0-9]+:/\1$((base_epoch / 86400)):/" "$root/etc/shadow-"
  tar -C "$root" --sort=name --mtime="@$base_epoch" --clamp-mtime --numeric-owner \
    --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime -cf "$out/base/rootfs.tar.tmp" .
  mv "$out/base/rootfs.tar.tmp" "$out/base/rootfs.tar"
  rm -rf "$root"
}
import_base() {
  local ctr
  buildah rmi "$base_tag" >/dev/null 2>&1 || true  # not -f: a container using it stays
  ctr="$(buildah from scratch)"
  buildah add --quiet "$ctr" "$out/base/rootfs.tar" / >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd bash \
    --created-by "debootstrap --variant=minbase $suite" "$ctr"
  buildah commit --quiet --timestamp "$(cat "$out/base/epoch")" --rm "$ctr" "$base_tag" >/dev/null
}
if [ ! -f "$out/base/rootfs.tar" ] || [ ! -f "$out/base/epoch" ] || [ "$(cat "$out/base/recipe" 2>/dev/null)" != "$base_recipe" ]; then
  t0=$SECONDS
  make_base
  echo "$base_recipe" >"$out/base/recipe"
  log "base made in $((SECONDS - t0)) s ($(du -m "$out/base/rootfs.tar" | cut -f1) MB)"
fi
import_base
log "base $base_tag: $(buildah inspect --type image --format '{{.FromImageDigest}}' "$base_tag")"
[ "$base_only" = 1 ] && exit 0

# ---------------------------------------------------------------- the image
archive="$out/ray-webhook-$version.oci.tar"
# An archive of this commit is reused (the build is reproducible: it would be the same).
if [ -f "$archive" ] && [ "$(cat "$out/ray-webhook-$version.revision" 2>/dev/null)" = "$revision" ] \
  && [ -z "${IMAGE_REBUILD:-}" ]; then
  log "$archive is of ${revision:0:12} already: $(cat "$out/ray-webhook-$version.digest")"
  exit 0
fi
image_paths=(Dockerfile .dockerignore CMakeLists.txt include src pgo scripts tests/fixtures/reviews)
tree_is_commit=1
if ! git diff --quiet HEAD -- "${image_paths[@]}" || [ -n "$(git ls-files --others --exclude-standard -- "${image_paths[@]}")" ]; then
  tree_is_commit=0
  log "note: the image is built from the commit ${revision:0:12}; uncommitted changes are not in it"
fi
context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
git archive HEAD | tar -x -C "$context"
binary=source
if [ -n "${IMAGE_BINARY:-}" ]; then
  if [ "$tree_is_commit" = 1 ] && [ -x "$IMAGE_BINARY" ]; then
    mkdir -p "$context/build"
    cp "$IMAGE_BINARY" "$context/build/ray-webhook"
    binary=context
    log "the binary: $IMAGE_BINARY, built from this commit's sources"
  else
    log "IMAGE_BINARY=$IMAGE_BINARY not used (missing, or the tree is not the commit): the image compiles its own"
  fi
fi
tag="ray-webhook:$version"
t0=$SECONDS
log "buildah build $tag at ${revision:0:12} (SOURCE_DATE_EPOCH=$epoch, BINARY=$binary)"
buildah rmi "localhost/$tag" >/dev/null 2>&1 || true
buildah build --isolation chroot --timestamp "$epoch" --layers=false \
  --build-arg DEBIAN_IMAGE="$base_tag" --build-arg BINARY="$binary" \
  --label org.opencontainers.image.version="$version" \
  --label org.opencontainers.image.revision="$revision" \
  --label org.opencontainers.image.source="${IMAGE_SOURCE:-NOASSERTION}" \
  --label org.opencontainers.image.licenses="${IMAGE_LICENSES:-NOASSERTION}" \
  --label org.opencontainers.image.created="$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)" \
  -t "$tag" -f "$context/Dockerfile" "$context" >"$out/build.log" 2>&1 \
  || { tail -30 "$out/build.log" >&2; die "buildah build failed (build/image/build.log)"; }
log "built in $((SECONDS - t0)) s"

rm -f "$archive" "$out/ray-webhook-$version.revision"
buildah push --quiet "$tag" "oci-archive:$archive:$tag" >/dev/null
digest="$(skopeo inspect --format '{{.Digest}}' "oci-archive:$archive")"
echo "$digest" >"$out/ray-webhook-$version.digest"

# The bill of materials, from the image's own files.
ctr="$(buildah from --quiet "$tag")"
root="$(buildah mount "$ctr")"
python3 scripts/image_sbom.py --root "$root" --name ray-webhook --version "$version" --revision "$revision" \
  --digest "$digest" --epoch "$epoch" >"$out/ray-webhook-$version.spdx.json"
buildah umount "$ctr" >/dev/null
buildah rm "$ctr" >/dev/null
# The provenance: what was built, from what, by what (SLSA v1; no clock read:
# the same build gives the same statement).
jq -n --arg revision "$revision" --arg source "${IMAGE_SOURCE:-NOASSERTION}" --arg binary "$binary" \
  --arg epoch "$epoch" --arg suite "$suite" --arg mirror "$mirror" \
  --arg archive_date "$(date -u -d "@$(cat "$out/base/epoch")" +%Y-%m-%dT%H:%M:%SZ)" \
  --arg base_sha "$(sha256sum "$out/base/rootfs.tar" | cut -d' ' -f1)" \
  --arg buildah "$(buildah --version | awk '{print $3}')" \
  --arg debootstrap "$(dpkg-query -W -f '${Version}' debootstrap)" '{
    buildDefinition: {
      buildType: "urn:ray-webhook:scripts/image.sh:v1",
      externalParameters: {source: {uri: $source, revision: $revision}, dockerfile: "Dockerfile", binary: $binary},
      internalParameters: {SOURCE_DATE_EPOCH: $epoch, debian: {suite: $suite, mirror: $mirror, archiveDate: $archive_date}},
      resolvedDependencies: [
        ({name: "ray-webhook", digest: {gitCommit: $revision}} + if $source == "NOASSERTION" then {} else {uri: ("git+" + $source + "@" + $revision)} end),
        {name: ("debian-" + $suite + "-minbase"), digest: {sha256: $base_sha}, annotations: {archiveDate: $archive_date}}
      ]
    },
    runDetails: {builder: {id: "urn:ray-webhook:scripts/image.sh", version: {buildah: $buildah, debootstrap: $debootstrap}}}
  }' >"$out/ray-webhook-$version.provenance.json"
echo "$revision" >"$out/ray-webhook-$version.revision"
log "$archive ($(du -m "$archive" | cut -f1) MB), $digest"
