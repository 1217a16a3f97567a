#!/usr/bin/env bash
# The size of ray-webhook's image, beside two images built here for scale:
#   bench/image-size.sh [--smoke] [ARCHIVE]     (default build/image/ray-webhook-VERSION.oci.tar)
# - controller-runtime-peer (bench/peers) built as a distroless operator image
#   is built: a static Go binary (CGO_ENABLED=0, -trimpath) on a base that
#   holds what gcr.io/distroless/static:nonroot holds (the users root, nobody
#   and nonroot 65532, /tmp, the CA certificates and the time zones), taken
#   from Debian's packages, since no registry is reachable;
# - ray-webhook on that same base: its stripped binary with every shared
#   library it loads (glibc's included) and nothing else, to show what the
#   Debian base costs. It is run once inside, as 65532, to show it works.
# Prints a table: each image's compressed size (its gzip layers, what a
# registry stores and a node pulls) and unpacked size (its layers' tar
# bytes). Needs root, buildah, skopeo and Go (PATH).
# --smoke: the same run (there is no smaller one), failing when a size, the
# library count or the binary's --version answer is missing or zero.
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
sizes() {
  local d="$work/layout-$RANDOM"
  mkdir -p "$d" && tar -xf "$1" -C "$d"
  local manifest compressed=0 unpacked=0 digest size
  manifest="$d/blobs/sha256/$(jq -r '.manifests[0].digest' "$d/index.json" | cut -d: -f2)"
  while read -r digest size; do
    compressed=$((compressed + size))
    unpacked=$((unpacked + $(gzip -dc "$d/blobs/sha256/${digest#sha256:}" | wc -c)))
  done < <(jq -r '.layers[] | "\(.digest) \(.size)"' "$manifest")
  rm -rf "$d"
  echo "$compressed $unpacked"
}

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

echo "ray-webhook on the same base" >&2
shipped="$(buildah from --quiet "oci-archive:$archive")"
ctrs+=("$shipped")
shipped_root="$(buildah mount "$shipped")"
small="$(buildah from --quiet scratch)"
ctrs+=("$small")
root="$(buildah mount "$small")"
static_base "$root"
install -D -m 0755 "$shipped_root/usr/local/bin/ray-webhook" "$root/usr/local/bin/ray-webhook"
# Every library the binary loads, at the path the loader finds it by itself
# (Debian's glibc searches /lib/x86_64-linux-gnu with no ld.so.cache).
chroot "$shipped_root" ldd /usr/local/bin/ray-webhook | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\/.*ld-linux/ { print $1 }' |
  while read -r lib; do
    real="$(chroot "$shipped_root" readlink -f "$lib")"
    case "$lib" in
      */ld-linux*) install -D -m 0755 "$shipped_root$real" "$root$lib" ;;
      *) install -D -m 0644 "$shipped_root$real" "$root/lib/x86_64-linux-gnu/${lib##*/}" ;;
    esac
  done
out="$(chroot --userspec=65532:65532 "$root" /usr/local/bin/ray-webhook --version)"
echo "ray-webhook on the static base runs: $out" >&2
[ "$smoke" = 0 ] || [ -n "$out" ] || { echo "image-size.sh: --smoke: ray-webhook --version printed nothing" >&2; exit 1; }
buildah config --user 65532:65532 --entrypoint '["/usr/local/bin/ray-webhook", "serve", "--cert-dir", "/tmp/k8s-webhook-server/serving-certs"]' "$small"
buildah umount "$small" >/dev/null
commit "$small" small

row() {
  local s
  read -r -a s < <(sizes "$2")
  if [ "$smoke" = 1 ] && ! { [ "${s[0]:-0}" -gt 0 ] && [ "${s[1]:-0}" -gt 0 ]; } 2>/dev/null; then
    echo "image-size.sh: --smoke: no size for $1 ($2): '${s[*]}'" >&2
    exit 1
  fi
  awk -v n="$1" -v c="${s[0]}" -v u="${s[1]}" -v note="$3" \
    'BEGIN { printf "| %s | %.1f MB | %.1f MB | %s |\n", n, c / 1e6, u / 1e6, note }'
}
echo "| image | compressed | unpacked | contents |"
echo "|---|---:|---:|---|"
bundled="$(tar -tf "$archive" >/dev/null && chroot "$shipped_root" ls /usr/local/lib/ray-webhook | wc -l)"
[ "$smoke" = 0 ] || [ "${bundled:-0}" -gt 0 ] || { echo "image-size.sh: --smoke: no bundled libraries in $archive" >&2; exit 1; }
row "ray-webhook $version (shipped)" "$archive" "Debian 12 minbase, the binary, $bundled bundled libraries"
row "ray-webhook on a distroless-style base" "$work/small.oci.tar" "the binary and every library it loads, passwd, CA certificates, time zones"
row "controller-runtime peer, distroless-style" "$work/peer.oci.tar" "static Go binary ($(du -b "$work/manager" | cut -f1 | awk '{printf "%.1f MB", $1/1e6}')), passwd, CA certificates, time zones"
[ "$smoke" = 0 ] || echo "image-size.sh: --smoke: every figure present"
