#!/usr/bin/env bash
# The size of ray-webhook's image beside the controller-runtime peer's, in one run:
#   bench/image-size.sh [--smoke] [ARCHIVE]     (default build/image/ray-webhook-VERSION.oci.tar)
# - ray-webhook: the image scripts/image.sh built (FROM scratch: the binary,
#   the libraries it loads, the CA bundle, its users and its packages' dpkg
#   records);
# - controller-runtime-peer (bench/peers) built here as a distroless operator
#   image: a static Go binary (CGO_ENABLED=0, -trimpath) on a base that holds
#   what gcr.io/distroless/static:nonroot holds (the users root, nobody and
#   nonroot 65532, /tmp, the CA certificates and the time zones), taken from
#   Debian's packages, since no public registry is reachable.
# Prints a table: each image's compressed size (its gzip layers, what a
# registry stores and a node pulls), unpacked size (its layers' tar bytes),
# and ray-webhook's share of the peer's, against the budget (at most 20 MB
# unpacked and 8 MB compressed, half the peer's). Needs root, buildah, skopeo
# and Go (PATH).
# --smoke: the same run (there is no smaller one), failing when a size is
# missing or zero.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"
version="$(sed -n 's/^project(ray-webhook VERSION \([0-9][0-9.]*\) .*/\1/p' CMakeLists.txt)"
smoke=0
archive=""
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) smoke=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "image-size.sh: unknown flag $1 (try --help)" >&2; exit 2 ;;
    *) archive="$1"; shift ;;
  esac
done
archive="${archive:-$repo/build/image/ray-webhook-$version.oci.tar}"
base="$repo/build/image/base/rootfs.tar"
[ -f "$archive" ] || { echo "no $archive (scripts/image.sh builds it)" >&2; exit 1; }
[ -f "$base" ] || { echo "no $base (scripts/image.sh builds it)" >&2; exit 1; }
epoch="$(git log -1 --format=%ct)"
work="$(mktemp -d)"
ctrs=()
cleanup() {
  for c in "${ctrs[@]}"; do buildah umount "$c" >/dev/null 2>&1; buildah rm "$c" >/dev/null 2>&1; done
  rm -rf "$work"
}
trap cleanup EXIT

# sizes ARCHIVE: "COMPRESSED UNPACKED" in bytes.
sizes() { bash "$repo/scripts/image_sizes.sh" "$1"; }

# static_base ROOT: what distroless/static:nonroot holds, from the Debian base
# (time zones, if its minbase has them) and this machine's Debian packages.
static_base() {
  local root="$1"
  mkdir -p "$root/etc/ssl/certs" "$root/tmp" "$root/home/nonroot" "$root/usr/share"
  chmod 1777 "$root/tmp"
  printf 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n' >"$root/etc/passwd"
  printf 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n' >"$root/etc/group"
  chown 65532:65532 "$root/home/nonroot"
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
  if tar -tf "$base" ./usr/share/zoneinfo/UTC >/dev/null 2>&1; then
    tar -xf "$base" -C "$root" ./usr/share/zoneinfo
  elif [ -d /usr/share/zoneinfo ]; then
    cp -a /usr/share/zoneinfo "$root/usr/share/"
  fi
}

# commit CTR NAME: the container as an OCI archive, dated at the commit.
commit() {
  buildah commit --quiet --disable-compression=false --timestamp "$epoch" "$1" "oci-archive:$work/$2.oci.tar" >/dev/null
}

echo "building controller-runtime-peer statically" >&2
(cd bench/peers && CGO_ENABLED=0 go build -trimpath -o "$work/manager" ./cmd/controller-runtime-peer)
peer="$(buildah from --quiet scratch)"
ctrs+=("$peer")
root="$(buildah mount "$peer")"
static_base "$root"
install -m 0755 "$work/manager" "$root/manager"
buildah config --user 65532:65532 --entrypoint '["/manager"]' "$peer"
buildah umount "$peer" >/dev/null
commit "$peer" peer

row() {
  awk -v n="$1" -v c="$2" -v u="$3" -v note="$4" \
    'BEGIN { printf "| %s | %.1f MB | %.1f MB | %s |\n", n, c / 1e6, u / 1e6, note }'
}
read -r -a own < <(sizes "$archive")
read -r -a peer_sizes < <(sizes "$work/peer.oci.tar")
if [ "$smoke" = 1 ] && ! { [ "${own[0]:-0}" -gt 0 ] && [ "${own[1]:-0}" -gt 0 ] && [ "${peer_sizes[0]:-0}" -gt 0 ] && [ "${peer_sizes[1]:-0}" -gt 0 ]; } 2>/dev/null; then
  echo "image-size.sh: --smoke: a size is missing: ray-webhook '${own[*]}', peer '${peer_sizes[*]}'" >&2
  exit 1
fi
packages="$(buildah from --quiet "oci-archive:$archive")"
ctrs+=("$packages")
records="$(ls "$(buildah mount "$packages")/var/lib/dpkg/status.d" | grep -vc '\.md5sums$')"
echo "| image | compressed | unpacked | contents |"
echo "|---|---:|---:|---|"
row "ray-webhook $version" "${own[0]}" "${own[1]}" "the stripped binary, the libraries it loads from $records Debian packages (with their records), CA certificates, passwd"
row "controller-runtime peer, distroless-style" "${peer_sizes[0]}" "${peer_sizes[1]}" "static Go binary ($(du -b "$work/manager" | cut -f1 | awk '{printf "%.1f MB", $1/1e6}')), passwd, CA certificates, time zones"
awk -v c="${own[0]}" -v u="${own[1]}" -v pc="${peer_sizes[0]}" -v pu="${peer_sizes[1]}" 'BEGIN {
  printf "| ray-webhook / peer | %.2f | %.2f | budget: at most 8 MB compressed and 20 MB unpacked, %s |\n", c / pc, u / pu,
    (c <= 8e6 && u <= 20e6) ? "held" : "EXCEEDED" }'
[ "$smoke" = 0 ] || echo "image-size.sh: --smoke: every figure present"
