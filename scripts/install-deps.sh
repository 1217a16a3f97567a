#!/usr/bin/env bash
# Installs the Debian packages that building and running ray-webhook need, and
# with --test also those its tests need, and Ray (tests/e2e/ray/requirements.txt)
# in the end-to-end suite's virtual environment; only what is missing. Safe to run again.
# --runtime: only the shared libraries the built binary loads (and binutils,
# whose strip the Dockerfile's staging runs), for an image stage that is handed
# a built binary instead of compiling it.
set -euo pipefail

packages=(
  build-essential cmake pkg-config
  libcpp-httplib-dev libssl-dev nlohmann-json3-dev libsimdjson-dev libspdlog-dev prometheus-cpp-dev libyaml-cpp-dev
  openssl ca-certificates
)
if [ "${1:-}" = "--runtime" ]; then
  packages=(libssl3 libsimdjson14 libfmt9 libprometheus-cpp-core1.0 libyaml-cpp0.7 binutils ca-certificates)
fi
if [ "${1:-}" = "--test" ]; then
  # evanphx/json-patch is the library kube-apiserver applies patches with; the replay uses it.
  # clang: the lock analysis (scripts/check-thread-safety.sh).
  # prometheus: its promtool checks the chart's alerting rules (tests/alerts/).
  # iptables, conntrack: kube-proxy's rules in the end-to-end cluster; nftables: the Ray Pods' networks and the cut link
  # (tests/e2e/framework/pod_network.go, partition.go); python3-venv: Ray's environment.
  # libbenchmark-dev, wrk, nginx-light (with njs: the null webhook), valgrind: every bench/ script runs in its --smoke
  # mode (bench/CMakeLists.txt, and scripts/test.sh for the three that need more than the build).
  packages+=(libgtest-dev golang-go golang-github-evanphx-json-patch-dev curl jq iproute2 python3 clang-format clang
    prometheus iptables conntrack nftables python3-venv python3-pytest libbenchmark-dev wrk nginx-light
    libnginx-mod-http-js valgrind)
fi
if [ "${1:-}" = "--fuzz" ]; then
  packages+=(clang libclang-rt-14-dev)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and kubectl may come from Debian or elsewhere; only their commands matter.
if [ "${1:-}" = "--test" ] && ! { command -v node && command -v npm; } >/dev/null; then
  missing+=(nodejs npm)
fi
if [ "${1:-}" = "--test" ] && ! command -v kubectl >/dev/null; then
  missing+=(kubernetes-client)
fi

# install_ray: Ray for the end-to-end suite's Ray Pods, in a virtual environment
# of its own outside /tmp (each Pod gets a /tmp of its own), made with Debian's
# python3 and reused while it holds exactly tests/e2e/ray/requirements.txt.
install_ray() {
  local req venv stamp
  req="$(cd "$(dirname "$0")/.." && pwd)/tests/e2e/ray/requirements.txt"
  venv="${E2E_RAY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/ray-webhook-e2e/ray-$(sed -n 's/^ray\[[a-z,]*\]==//p' "$req")}"
  stamp="$(sha256sum "$req" | cut -c1-16)"
  [ "$(cat "$venv/.requirements" 2>/dev/null)" = "$stamp" ] && [ -x "$venv/bin/ray" ] && return 0
  echo "install-deps: installing Ray into $venv" >&2
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check -r "$req"
  echo "$stamp" >"$venv/.requirements"
}

if [ ${#missing[@]} -eq 0 ]; then
  [ "${1:-}" != "--test" ] || install_ray
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
[ "${1:-}" != "--test" ] || install_ray
