#!/usr/bin/env bash
# End-to-end suite: ray-webhook behind a real kube-apiserver, etcd and KubeRay
# operator, all built from Go modules (tests/e2e/, README there).
#
#   scripts/e2e.sh            build what is missing, start, run the Go suite, stop
#   scripts/e2e.sh --keep     the same, then leave everything running and print
#                             the KUBECONFIG and the command that stops it all
#   scripts/e2e.sh --up       start the cluster and install ray-webhook
#                             from deploy/, run no check, and
#                             leave it running as --keep does (bench/apiserver.sh)
#   scripts/e2e.sh --build    only build the Go binaries into tests/e2e/.bin/
#
# Environment: RAY_WEBHOOK_BIN (default build/ray-webhook, built with
# scripts/build.sh when missing), E2E_GO_P (go build -p, default 1),
# E2E_BIN_DIR (where the Go binaries are cached, default tests/e2e/.bin),
# E2E_WORK (work directory, default a new one under /tmp), E2E_POD_CIDR,
# E2E_GO_RUN (a -test.run pattern for the Go suite), E2E_GO_TIMEOUT,
# E2E_ALL_RELEASES=1 (also the operator releases marked OPTIONAL).
#
# The script builds and brings up the cluster (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, KWOK's node, CoreDNS, the Ray
# stand-in), installs ray-webhook from deploy/, writes cluster.env and runs the
# Go suite (tests/e2e/*_test.go) on it: one PASS or FAIL line per test, then
# "N passed, N failed".
#
# Nothing leaves this machine: etcd, kube-apiserver and the operators listen
# on 127.0.0.1; ray-webhook listens on the host end of a veth pair whose other
# end is in a network namespace this script creates (a free 10.200.0.x/29),
# the address the Service's EndpointSlice names; Pod addresses come from a
# range made local to this host (E2E_POD_CIDR, default 10.200.64.0/22).
set -uo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
e2e="$repo/tests/e2e"
bin="${E2E_BIN_DIR:-$e2e/.bin}"
keep=0
up_only=0
build_only=0
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    --up) keep=1; up_only=1 ;;
    --build) build_only=1 ;;
    -h|--help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "e2e.sh: unknown argument $arg" >&2; exit 2 ;;
  esac
done

# The Go of /usr/local/go first (Debian's golang-go is older than these modules).
[ -x /usr/local/go/bin/go ] && PATH="/usr/local/go/bin:$PATH"
export PATH
export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
go_p="${E2E_GO_P:-1}"

log() { printf '%s e2e: %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }
die() { log "$*"; exit 1; }

need_tools() {
  local missing=()
  command -v curl >/dev/null || missing+=(curl)
  command -v jq >/dev/null || missing+=(jq)
  command -v openssl >/dev/null || missing+=(openssl)
  command -v ip >/dev/null || missing+=(iproute2)
  command -v ss >/dev/null || missing+=(iproute2)
  if [ ${#missing[@]} -gt 0 ]; then
    log "installing ${missing[*]}"
    apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null \
      || die "could not install ${missing[*]}"
  fi
  command -v go >/dev/null || die "go is not on PATH"
}

# ---------------------------------------------------------------- building
# build NAME DIR PACKAGE: go build PACKAGE inside module DIR into .bin/NAME,
# unless .bin/NAME exists and was built from the same go.mod, go.sum and
# sources (a stamp of their hashes), so a second run rebuilds nothing.
build() {
  local name="$1" dir="$2" pkg="$3" stamp ldflags=""
  # A test file changes only the suite's binary (e2e.test), not the others of its module.
  stamp="$( (cd "$dir" && cat go.mod go.sum $(ls ./*.go 2>/dev/null | grep -v '_test\.go$') $(find cmd/"$name" -name '*.go' 2>/dev/null); \
    [ "$name" != e2e.test ] || find . -maxdepth 1 -name '*_test.go' -print0 | sort -z | xargs -0r cat; \
    [ "$name" != e2e.test ] || find framework testdata -type f -print0 2>/dev/null | sort -z | xargs -0r cat; \
    sed -n '/^build() {/,/^}/p' "$repo/scripts/e2e.sh") | sha256sum | cut -c1-16) $(go version | cut -d' ' -f3)"
  if [ -x "$bin/$name" ] && [ "$(cat "$bin/$name.stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  log "building $name ($pkg in ${dir#"$repo"/})"
  local t0=$SECONDS
  case "$name" in
    kube-apiserver|kubectl|kube-scheduler|kube-controller-manager)
      # What k8s.io/kubernetes' hack/lib/version.sh stamps into a release
      # build; without it the binaries report v0.0.0-master.
      local v
      v="$(cd "$dir" && go list -m -f '{{.Version}}' k8s.io/kubernetes)" || return 1
      local x="-X k8s.io/component-base/version"
      ldflags="$x.gitVersion=$v $x.gitMajor=$(cut -d. -f1 <<<"${v#v}") $x.gitMinor=$(cut -d. -f2 <<<"$v")"
      ldflags="$ldflags $x.gitTreeState=clean $x.buildDate=1970-01-01T00:00:00Z"
      ;;
  esac
  local verb=(build)
  [ "$name" != e2e.test ] || verb=(test -c)  # the Go suite: a test binary
  if (cd "$dir" && nice -n 10 go "${verb[@]}" -p="$go_p" -trimpath -ldflags="$ldflags" -o "$bin/$name.tmp" "$pkg") \
    >"$bin/$name.build.log" 2>&1; then
    mv -f "$bin/$name.tmp" "$bin/$name"
    echo "$stamp" >"$bin/$name.stamp"
    log "built $name in $((SECONDS - t0)) s"
  else
    log "building $name failed:"; tail -20 "$bin/$name.build.log" >&2
    return 1
  fi
}

# Module directory of a requirement of module DIR (downloaded if needed).
module_dir() {
  (cd "$1" && go mod download "$2" && go list -m -f '{{.Dir}}' "$2")
}

operator_releases() { # a folder with a file OPTIONAL (a long cold build) only with E2E_ALL_RELEASES=1
  local d
  for d in "$e2e"/kuberay-v*/; do
    [ -f "$d/OPTIONAL" ] && [ "${E2E_ALL_RELEASES:-0}" != 1 ] && continue
    [ -f "$d/go.mod" ] && basename "$d"
  done
}

build_all() {
  mkdir -p "$bin"
  local ok=0 r
  build etcd "$e2e/etcd" . || ok=1
  build kube-apiserver "$e2e" ./cmd/kube-apiserver || ok=1
  build kubectl "$e2e" ./cmd/kubectl || ok=1
  build kube-controller-manager "$e2e" ./cmd/kube-controller-manager || ok=1
  build kube-scheduler "$e2e" ./cmd/kube-scheduler || ok=1
  build kwok "$e2e/addons" sigs.k8s.io/kwok/cmd/kwok || ok=1
  build coredns "$e2e/addons" ./cmd/coredns || ok=1
  # The Go suite; when it does not build, run_go_suite counts one failure and the bash checks run.
  build e2e.test "$e2e" . || { rm -f "$bin/e2e.test"; log "the Go suite did not build (see $bin/e2e.test.build.log)"; }
  build recorder "$e2e" ./cmd/recorder || ok=1
  build podload "$e2e" ./cmd/podload || ok=1
  build ray-standin "$e2e" ./cmd/ray-standin || ok=1
  # Helm for charts/ray-webhook (checks 25a to 25c); the other checks run without it.
  build helm "$e2e/helm" helm.sh/helm/v3/cmd/helm || log "helm did not build (see $bin/helm.build.log)"
  for r in $(operator_releases); do
    build "$r" "$e2e/$r" github.com/ray-project/kuberay/ray-operator || log "$r did not build (see $bin/$r.build.log)"
  done
  return $ok
}

need_tools
t_build=$SECONDS
build_all || die "the control plane did not build"
log "binaries ready in $((SECONDS - t_build)) s"
[ "$build_only" = 1 ] && exit 0

ray_webhook="${RAY_WEBHOOK_BIN:-$repo/build/ray-webhook}"
if [ ! -x "$ray_webhook" ]; then
  [ -z "${RAY_WEBHOOK_BIN:-}" ] || die "RAY_WEBHOOK_BIN=$ray_webhook is not executable"
  log "building ray-webhook (scripts/build.sh)"
  bash "$repo/scripts/build.sh" >&2 || die "scripts/build.sh failed"
fi

# ---------------------------------------------------------------- state, cleanup
work="${E2E_WORK:-$(mktemp -d /tmp/ray-webhook-e2e.XXXXXX)}"
mkdir -p "$work/logs" "$work/pki"
logs="$work/logs"
# A copy of the server for this run: build/ may be rebuilt while the suite runs.
for ((i = 0; i < 20; i++)); do
  cp "$ray_webhook" "$work/ray-webhook" 2>/dev/null && "$work/ray-webhook" --version >/dev/null 2>&1 && break
  sleep 3
done
"$work/ray-webhook" --version >/dev/null 2>&1 || die "cannot run a copy of $ray_webhook"
log "ray-webhook: $ray_webhook ($("$work/ray-webhook" --version 2>&1 | head -1))"
ray_webhook="$work/ray-webhook"
declare -A pids=()
netns=""
passed=0
failed=0
failures=()

stop_pid() { # stop_pid NAME: SIGTERM, then SIGKILL after 40 s (ray-webhook drains for 5 s)
  local name="$1" pid="${pids[$1]:-}" i
  [ -n "$pid" ] || return 0
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null
    for ((i = 0; i < 400; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  fi
  wait "$pid" 2>/dev/null
  unset "pids[$name]"
}

summary_printed=0
cleanup() {
  local rc=$?
  if [ "$keep" = 1 ] && [ "$summary_printed" = 1 ]; then return; fi
  local name
  for name in podload kuberay ray-webhook ray-webhook-b recorder ray-standin coredns kwok kube-scheduler \
    kube-controller-manager kube-apiserver etcd; do stop_pid "$name"; done
  for name in "${!pids[@]}"; do stop_pid "$name"; done
  [ -n "$netns" ] && { ip netns del "$netns" 2>/dev/null; rm -rf "/etc/netns/$netns"; }
  [ -n "${pod_route:-}" ] && ip route del local "$pod_cidr" dev lo 2>/dev/null
  if [ "$failed" = 0 ] && [ $rc = 0 ]; then
    rm -rf "$work"
  elif [ "$summary_printed" = 0 ]; then
    # Stopped early (die, a signal): the run counts as one more failure.
    log "logs kept in $work/logs"
    echo "$passed passed, $((failed + 1)) failed"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

declare -A used_ports=()
free_port() {
  local p i
  for ((i = 0; i < 200; i++)); do
    p=$((20000 + RANDOM % 30000))
    [ -n "${used_ports[$p]:-}" ] && continue
    if [ -z "$(ss -Htan "sport = :$p" 2>/dev/null)" ]; then used_ports[$p]=1; echo "$p"; return 0; fi
  done
  return 1
}

wait_until() { # wait_until SECONDS DESCRIPTION CMD...: run CMD every 0.5 s until it succeeds
  # (with wait_pid set: give up as soon as that process has exited)
  local limit="$1" what="$2" i
  shift 2
  for ((i = 0; i < limit * 2; i++)); do
    "$@" >/dev/null 2>&1 && return 0
    if [ -n "${wait_pid:-}" ] && ! kill -0 "$wait_pid" 2>/dev/null; then
      log "gave up waiting for $what: the process exited"
      return 1
    fi
    sleep 0.5
  done
  log "timed out after ${limit}s waiting for $what"
  return 1
}

pass() { passed=$((passed + 1)); printf 'PASS %s\n' "$1"; }
fail() { failed=$((failed + 1)); failures+=("$1"); printf 'FAIL %s: %s\n' "$1" "$2"; }

kc() { "$bin/kubectl" --kubeconfig "$work/kubeconfig" "$@"; }

# ---------------------------------------------------------------- certificates
pki="$work/pki"
make_pki() {
  (
    cd "$pki" || exit 1
    umask 077
    openssl ecparam -name prime256v1 -genkey -noout -out ca.key 2>/dev/null
    openssl req -x509 -new -key ca.key -sha256 -days 2 -subj "/CN=e2e-kubernetes-ca" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" -out ca.crt
    sign() { # sign NAME SUBJECT EXTENSIONS
      openssl ecparam -name prime256v1 -genkey -noout -out "$1.key" 2>/dev/null
      openssl req -new -key "$1.key" -subj "$2" -out "$1.csr"
      printf '%s\n' "$3" >"$1.ext"
      openssl x509 -req -in "$1.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -sha256 -days 2 \
        -extfile "$1.ext" -out "$1.crt" 2>/dev/null
    }
    sign apiserver "/CN=kube-apiserver" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,IP:::ffff:7f00:1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:$service_ip"
    sign admin "/O=system:masters/CN=e2e-admin" "basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=clientAuth"
    # The service-account token key pair (kube-apiserver signs, and verifies, with it).
    openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out sa.key 2>/dev/null
    openssl pkey -in sa.key -pubout -out sa.pub
    rm -f ./*.csr ./*.ext ca.srl
    chmod 644 ca.crt
  ) || die "making certificates failed"
}

write_kubeconfig() {
  cat >"$work/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:$apiserver_port
    certificate-authority-data: $(base64 -w0 <"$pki/ca.crt")
users:
- name: e2e-admin
  user:
    client-certificate-data: $(base64 -w0 <"$pki/admin.crt")
    client-key-data: $(base64 -w0 <"$pki/admin.key")
contexts:
- name: e2e
  context: {cluster: e2e, user: e2e-admin}
current-context: e2e
EOF
  chmod 600 "$work/kubeconfig"
}

# ---------------------------------------------------------------- network namespace
# A veth pair: the host end gets .1 of a free 10.200.0.x/30, the other end .2
# inside network namespace $netns. ray-webhook listens on the host end, so its
# lookup still reaches kube-apiserver on 127.0.0.1 (the Endpoints address may
# not be loopback: EndpointSlice validation refuses it).
make_netns() {
  local i used
  used="$(ip -4 -o addr show 2>/dev/null | awk '{print $4}')"
  for ((i = 0; i < 32; i++)); do
    if ! grep -qE "^10\.200\.0\.($((i * 8 + 1))|$((i * 8 + 2))|$((i * 8 + 3))|$((i * 8 + 4))|$((i * 8 + 6)))/" <<<"$used"; then break; fi
  done
  [ "$i" -lt 32 ] || die "no free /29 in 10.200.0.0/24"
  netns="rwe2e-$$"
  local host_if="rwe2e$$h" peer_if="rwe2e$$p"
  # Two replica addresses on the host end, the peer end in the namespace.
  webhook_ip="10.200.0.$((i * 8 + 1))"
  webhook_ip2="10.200.0.$((i * 8 + 2))"
  peer_ip="10.200.0.$((i * 8 + 6))"
  # CoreDNS of the cluster (.3) and a second one a test may start (.4).
  dns_ip="10.200.0.$((i * 8 + 3))"
  dns_ip2="10.200.0.$((i * 8 + 4))"
  ip netns add "$netns" || die "ip netns add failed (root and CAP_NET_ADMIN are needed)"
  ip link add "$host_if" type veth peer name "$peer_if" || die "ip link add veth failed"
  ip link set "$peer_if" netns "$netns"
  ip addr add "$webhook_ip/29" dev "$host_if"
  ip addr add "$webhook_ip2/29" dev "$host_if"
  ip addr add "$dns_ip/29" dev "$host_if"
  ip addr add "$dns_ip2/29" dev "$host_if"
  ip link set "$host_if" up
  ip netns exec "$netns" ip addr add "$peer_ip/29" dev "$peer_if"
  ip netns exec "$netns" ip link set "$peer_if" up
  ip netns exec "$netns" ip link set lo up
  # The test host reaches the Pod addresses through the host end.
  ip netns exec "$netns" ip route add "$pod_cidr" via "$webhook_ip"
  log "network namespace $netns: host end $webhook_ip and $webhook_ip2 ($host_if), peer $peer_ip"
}

# The Pod addresses KWOK hands out ($pod_cidr) are local to this machine: a
# route of type local for the whole range (any address in it is accepted as
# this host's own), so the Ray stand-in can listen on each Pod's address and
# what dials a Pod reaches it. The range must be unused and unrouted.
make_pod_range() {
  pod_cidr="${E2E_POD_CIDR:-10.200.64.0/22}"
  if ip route show table all 2>/dev/null | grep -F -- "${pod_cidr%/*}" >/dev/null; then
    die "the Pod range $pod_cidr is already routed here (E2E_POD_CIDR to choose another)"
  fi
  ip route add local "$pod_cidr" dev lo || die "ip route add local $pod_cidr failed"
  pod_route=1
}

# ---------------------------------------------------------------- control plane
start_etcd() {
  etcd_port=$(free_port) && etcd_peer_port=$(free_port) || die "no free port"
  "$bin/etcd" --name e2e --data-dir "$work/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer_port" \
    --initial-cluster "e2e=http://127.0.0.1:$etcd_peer_port" --unsafe-no-fsync --log-level warn \
    >"$logs/etcd.log" 2>&1 &
  pids[etcd]=$!
  wait_pid=${pids[etcd]} wait_until 60 "etcd /health" curl -fsS "http://127.0.0.1:$etcd_port/health" || die "etcd did not start (logs/etcd.log)"
}

start_apiserver() {
  apiserver_port=$(free_port) || die "no free port"
  # Default admission plugins (ServiceAccount among them: it adds the token
  # volume every real Pod has, before the webhooks run). Aggregator routing:
  # webhooks given as clientConfig.service are dialled at an EndpointSlice
  # address of the Service instead of its ClusterIP (buildServiceResolver in
  # k8s.io/kubernetes cmd/kube-apiserver/app/server.go: NewEndpointServiceResolver;
  # k8s.io/apiserver pkg/util/proxy/proxy.go ResolveEndpoint). The service range
  # is only allocated from; nothing is routed to it. No endpoint reconciler: it
  # refuses a loopback advertise address, and no client here needs the
  # kubernetes Service's endpoints.
  "$bin/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$apiserver_port" \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-cluster-ip-range "$service_range" \
    --authorization-mode RBAC \
    --endpoint-reconciler-type none \
    --enable-aggregator-routing=true \
    --cert-dir "$work/apiserver-certs" \
    --audit-policy-file "$e2e/manifests/audit-policy.yaml" --audit-log-path "$logs/audit.log" \
    --profiling=false --v=1 \
    >"$logs/kube-apiserver.log" 2>&1 &
  pids[kube-apiserver]=$!
  wait_pid=${pids[kube-apiserver]} wait_until 120 "kube-apiserver /readyz" curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
    "https://127.0.0.1:$apiserver_port/readyz" || { tail -20 "$logs/kube-apiserver.log" >&2; die "kube-apiserver did not become ready"; }
}

# Namespace NS, and its ServiceAccount default, which kube-controller-manager's
# serviceaccount controller makes (the ServiceAccount admission plugin refuses
# Pods until it exists).
ensure_namespace() {
  kc get namespace "$1" >/dev/null 2>&1 || kc create namespace "$1" >/dev/null
  wait_until 30 "ServiceAccount default in $1" kc -n "$1" get serviceaccount default
}

# ---------------------------------------------------------------- the rest of the cluster
# kube-controller-manager and kube-scheduler of the API server's release, KWOK's
# simulated node, CoreDNS and the Ray stand-in. Each talks to kube-apiserver
# with the admin kubeconfig.
# start_component NAME FLAG...: kube-controller-manager or kube-scheduler with
# the admin kubeconfig (also for delegated authentication and authorization),
# no leader election, health on a free loopback port; waits for /healthz.
start_component() {
  local name="$1" port
  shift
  port=$(free_port) || die "no free port"
  "$bin/$name" --kubeconfig "$work/kubeconfig" \
    --authentication-kubeconfig "$work/kubeconfig" --authorization-kubeconfig "$work/kubeconfig" \
    --bind-address 127.0.0.1 --secure-port "$port" --leader-elect=false \
    --cert-dir "$work/$name-certs" --profiling=false --v=1 "$@" \
    >"$logs/$name.log" 2>&1 &
  pids[$name]=$!
  wait_pid=${pids[$name]} wait_until 60 "$name /healthz" curl -fsSk "https://127.0.0.1:$port/healthz" \
    || { tail -20 "$logs/$name.log" >&2; die "$name did not start"; }
}
# Every default controller. It signs the tokens of ServiceAccount token Secrets
# with the API server's key and publishes its CA (kube-root-ca.crt).
start_controller_manager() {
  start_component kube-controller-manager --service-account-private-key-file "$pki/sa.key" \
    --root-ca-file "$pki/ca.crt" --use-service-account-credentials=false --cluster-name e2e
}
start_scheduler() { start_component kube-scheduler; }

# KWOK manages one Node, kwok-node-0, whose Pod range is $pod_cidr. It is
# tainted: only Pods that tolerate $kwok_taint are scheduled there and run;
# every other Pod stays Pending, as the checks written for a cluster without
# nodes need (a Pod with no node is deleted at once; its phase is the one a
# check writes).
kwok_taint=e2e.ray-webhook.io/kwok
start_kwok() {
  local dir port f
  dir="$(module_dir "$e2e/addons" sigs.k8s.io/kwok)" || die "the KWOK module was not found"
  port=$(free_port) || die "no free port"
  # The stages KWOK's module ships: the node becomes Ready and keeps its lease;
  # Pods bound to it become Running and Ready, and go once deleted.
  : >"$work/kwok.yaml"
  for f in "$dir"/kustomize/stage/node/fast/node-initialize.yaml \
    "$dir"/kustomize/stage/node/heartbeat-with-lease/node-heartbeat-with-lease.yaml \
    "$dir"/kustomize/stage/pod/fast/pod-ready.yaml "$dir"/kustomize/stage/pod/fast/pod-complete.yaml \
    "$dir"/kustomize/stage/pod/fast/pod-delete.yaml; do
    [ -f "$f" ] || die "KWOK stage $f is missing"
    { cat "$f"; echo "---"; } >>"$work/kwok.yaml"
  done
  "$bin/kwok" --kubeconfig "$work/kubeconfig" --config "$work/kwok.yaml" \
    --manage-all-nodes=false --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --cidr "$pod_cidr" --node-ip "$dns_ip" --server-address "127.0.0.1:$port" --node-lease-duration-seconds 40 \
    >"$logs/kwok.log" 2>&1 &
  pids[kwok]=$!
  kc apply -f - >/dev/null <<NODE || die "creating the KWOK node failed"
apiVersion: v1
kind: Node
metadata:
  name: kwok-node-0
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: kwok-node-0, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
spec:
  podCIDR: $pod_cidr
  podCIDRs: [$pod_cidr]
  taints: [{key: $kwok_taint, value: "true", effect: NoSchedule}]
NODE
  node_ready() { [ "$(kc get node kwok-node-0 -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; }
  wait_pid=${pids[kwok]} wait_until 60 "the KWOK node Ready" node_ready || { tail -20 "$logs/kwok.log" >&2; die "the KWOK node did not become Ready"; }
}

# CoreDNS on $dns_ip:53 for the zone cluster.local: Service and Pod records
# from the API server; other names are refused, never forwarded.
start_coredns() {
  local ready
  ready=$(free_port) || die "no free port"
  cat >"$work/Corefile" <<COREFILE
cluster.local:53 {
    bind $dns_ip
    errors
    ready 127.0.0.1:$ready
    kubernetes cluster.local {
        kubeconfig $work/kubeconfig e2e
    }
}
COREFILE
  "$bin/coredns" -conf "$work/Corefile" >"$logs/coredns.log" 2>&1 &
  pids[coredns]=$!
  wait_pid=${pids[coredns]} wait_until 60 "CoreDNS /ready" curl -fsS "http://127.0.0.1:$ready/ready" \
    || { tail -20 "$logs/coredns.log" >&2; die "CoreDNS did not become ready"; }
  # What the operators resolve with (with_cluster_dns): CoreDNS alone.
  cluster_dns="$work/cluster-dns"
  mkdir -p "$cluster_dns"
  printf 'nameserver %s\noptions timeout:1 attempts:2\n' "$dns_ip" >"$cluster_dns/resolv.conf"
}

# A process in a mount namespace of its own whose /etc/resolv.conf names
# CoreDNS: the operators reach head Services by name as a Pod does, and no name
# they look up leaves this machine. start_operator's default operator_exec;
# exec keeps the pid start_operator saves.
with_cluster_dns() {
  exec unshare --mount -- sh -c 'mount --bind "$1" /etc/resolv.conf && shift && exec "$@"' \
    sh "$cluster_dns/resolv.conf" "$@"
}

# The Ray processes the operators call (cmd/ray-standin): the dashboard of
# each head and the Serve proxy of each Ray Pod, on the Pod's own address.
start_ray_standin() {
  "$bin/ray-standin" -server "https://127.0.0.1:$apiserver_port" -ca "$pki/ca.crt" -cert "$pki/admin.crt" \
    -key "$pki/admin.key" -pod-cidr "$pod_cidr" >"$logs/ray-standin.log" 2>&1 &
  pids[ray-standin]=$!
}

# ---------------------------------------------------------------- ray-webhook
# Renders deploy/ as shipped, in a copy (the static-certs overlay writes its
# generated/ folder beside itself): generate.sh runs certs/generate.sh and
# writes the Secret and the caBundle patches of the throw-away CA.
render_deploy() {
  mkdir -p "$work/src"
  cp -r "$repo/deploy" "$repo/certs" "$work/src/"
  rm -rf "$work/src/deploy/overlays/static-certs/generated" "$work/src/certs/out"
  bash "$work/src/deploy/overlays/static-certs/generate.sh" >"$logs/generate.log" 2>&1 || die "static-certs/generate.sh failed"
  webhook_certs="$work/src/deploy/overlays/static-certs/generated/certs"
  local o
  for o in static-certs cert-manager; do
    kc kustomize "$work/src/deploy/overlays/$o" >"$work/rendered-$o.yaml" 2>"$logs/kustomize-$o.log" \
      || die "kubectl kustomize deploy/overlays/$o failed"
  done
  as_list "$work/rendered-static-certs.yaml" >"$work/rendered-static-certs.json" \
    || die "the rendered static-certs overlay does not parse"
}
# as_list FILE|-: the objects of a rendering as one JSON List
as_list() {
  kc create --dry-run=client -o json -f "$1" \
    | jq -s '{apiVersion: "v1", kind: "List", items: [.[] | if .kind == "List" then .items[] else . end]}'
}

# The Deployment's container arguments and CLUSTER_DOMAIN, with --port and the
# certificate folder replaced by this run's; the lookup gets the API server on
# loopback and the token and CA of a ServiceAccount volume (sa_volume).
# start_ray_webhook [RENDERED_JSON]: the Deployment of that rendering (default
# static-certs). rw_name, rw_ip, rw_port and rw_probe (set before the call) pick
# the replica: default "ray-webhook" on $webhook_ip:$webhook_port, logging to
# logs/ray-webhook.log; rw_sa its ServiceAccount volume (default
# $work/serviceaccount), rw_api the API server's URL, rw_args flags appended.
start_ray_webhook() {
  local deployment args=() a name="${rw_name:-ray-webhook}" ip="${rw_ip:-$webhook_ip}"
  local probe="${rw_probe:-}" port="${rw_port:-$webhook_port}" sa="${rw_sa:-$work/serviceaccount}"
  deployment="$(jq -c '.items[] | select(.kind == "Deployment")' "${1:-$work/rendered-static-certs.json}")"
  while IFS= read -r a; do
    case "$a" in --port=*|--bind=*|--cert-dir=*|--tls-cert=*|--tls-key=*|--probe-port=*) continue ;; esac
    args+=("$a")
  done < <(jq -r '.spec.template.spec.containers[0].args[]' <<<"$deployment")
  if [ -n "${rw_args:-}" ]; then read -ra a <<<"$rw_args"; args+=("${a[@]}"); fi
  cluster_domain="$(jq -r '.spec.template.spec.containers[0].env[]? | select(.name == "CLUSTER_DOMAIN") | .value' <<<"$deployment")"
  # The plain-HTTP probe port (deploy/ has --probe-port=8081, for the kubelet),
  # on a free port here, when this build of the server has the flag.
  local ready_url="https://ray-webhook.ray-webhook-system.svc:$port/readyz"
  if "$ray_webhook" serve --help 2>&1 | grep -- '--probe-port' >/dev/null; then
    if [ -z "$probe" ]; then
      [ -n "${probe_port:-}" ] || probe_port=$(free_port) || die "no free port"
      probe=$probe_port
    fi
    args+=("--probe-port=$probe")
    ready_url="http://$ip:$probe/readyz"
  fi
  CLUSTER_DOMAIN="$cluster_domain" "$ray_webhook" serve --cert-dir "$secret_dir" \
    --bind "$ip" --port "$port" "${args[@]}" \
    --kube-api-server "${rw_api:-https://127.0.0.1:$apiserver_port}" --kube-ca-file "$sa/ca.crt" \
    --kube-token-file "$sa/token" \
    >>"$logs/$name.log" 2>&1 &
  pids[$name]=$!
  wait_pid=${pids[$name]} wait_until 30 "$name /readyz" curl -fsS --cacert "${webhook_certs_ca:-$webhook_certs/ca.crt}" \
    --resolve "ray-webhook.ray-webhook-system.svc:$port:$ip" "$ready_url" \
    || die "$name did not become ready (logs/$name.log)"
  log "$name serving on $ip:$port (args: ${args[*]})"
}

# A volume as the kubelet writes a Secret or a projected volume (k8s.io/kubernetes
# pkg/volume/util/atomic_writer.go): DIR/..data is a symlink to a timestamped
# folder, and every file links through ..data. An update writes a new folder
# and renames a new ..data over the old one.
volume_swap() { # volume_swap DIR FROM_DIR FILE...: the FILEs of FROM_DIR become DIR's content
  local dir="$1" from="$2" stamp="..$(date -u +%Y_%m_%d_%H_%M_%S.%N)" f
  shift 2
  mkdir -p "$dir/$stamp"
  for f in "$@"; do cp "$from/$f" "$dir/$stamp/$f"; done
  ln -sfn "$stamp" "$dir/..data_tmp"
  mv -T "$dir/..data_tmp" "$dir/..data"
  for f in "$@"; do [ -L "$dir/$f" ] || ln -s "..data/$f" "$dir/$f"; done
}
# The serving pair as the kubelet mounts the Secret: tls.crt, tls.key, ca.crt of FROM_DIR.
secret_swap() { volume_swap "$secret_dir" "$1" tls.crt tls.key ca.crt; }
# sa_volume DIR TOKEN_FILE [CA_FILE]: DIR as the kubelet projects a Pod's
# ServiceAccount volume (/var/run/secrets/kubernetes.io/serviceaccount: token,
# ca.crt, namespace), with that token and CA (default the API server's).
sa_volume() {
  local from
  from="$(mktemp -d "$work/sa-source.XXXXXX")"
  cp "$2" "$from/token" && cp "${3:-$pki/ca.crt}" "$from/ca.crt" && printf ray-webhook-system >"$from/namespace" \
    && volume_swap "$1" "$from" token ca.crt namespace
  rm -rf "$from"
}

# What the endpoint controller would publish: the Service ray-webhook's port
# "https" at PORT on each ADDRESS (ADDRESS:false for a replica not ready, as
# while its Pod terminates).
endpoint_slice() { # endpoint_slice PORT [ADDRESS[:false]...] (default: $webhook_ip)
  local port="$1" e eps=""
  shift
  [ $# -gt 0 ] || set -- "$webhook_ip"
  for e in "$@"; do
    case "$e" in
      *:false) eps="$eps
- addresses: [\"${e%:false}\"]
  conditions: {ready: false}" ;;
      *) eps="$eps
- addresses: [\"$e\"]
  conditions: {ready: true}" ;;
    esac
  done
  kc apply -f - >/dev/null <<EOF
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: ray-webhook-e2e
  namespace: ray-webhook-system
  labels:
    kubernetes.io/service-name: ray-webhook
    endpointslice.kubernetes.io/managed-by: e2e.sh
addressType: IPv4
endpoints:$eps
ports:
- name: https
  port: $port
  protocol: TCP
EOF
}

# ---------------------------------------------------------------- KubeRay
operator_dir() { module_dir "$e2e/$1" github.com/ray-project/kuberay/ray-operator; }

install_crds() { # install_crds RELEASE
  local dir
  dir="$(operator_dir "$1")" || return 1
  kc apply --server-side --force-conflicts -f "$dir/config/crd/bases/" >"$logs/crds-$1.log" 2>&1 || return 1
  kc wait --for condition=established --timeout=60s -f "$dir/config/crd/bases/" >>"$logs/crds-$1.log" 2>&1
}

start_operator() { # start_operator RELEASE (operator_exec: the command that runs it, default with_cluster_dns)
  local metrics probe
  metrics=$(free_port) && probe=$(free_port) || return 1
  KUBECONFIG="$work/kubeconfig" ${operator_exec:-with_cluster_dns} "$bin/$1" --metrics-addr "127.0.0.1:$metrics" \
    --health-probe-bind-address "127.0.0.1:$probe" --enable-leader-election=false \
    >>"$logs/operator-$1.log" 2>&1 &
  pids[kuberay]=$!
  wait_pid=${pids[kuberay]} wait_until 60 "operator $1 /readyz" curl -fsS "http://127.0.0.1:$probe/readyz" || {
    tail -20 "$logs/operator-$1.log" >&2
    return 1
  }
  log "operator $1 running (metrics 127.0.0.1:$metrics, probes 127.0.0.1:$probe)"
}

# keep_running: what --keep and --up leave running, a script that stops it,
# and bench.env, the addresses and files a benchmark on this control plane needs.
keep_running() {
  cat >"$work/stop.sh" <<EOF
#!/usr/bin/env bash
# Stops what scripts/e2e.sh --keep left running.
kill ${pids[*]} 2>/dev/null
sleep 6
kill -9 ${pids[*]} 2>/dev/null
ip netns del $netns 2>/dev/null
rm -rf /etc/netns/$netns
ip route del local $pod_cidr dev lo 2>/dev/null
rm -rf "$work"
EOF
  chmod +x "$work/stop.sh"
  cat >"$work/bench.env" <<EOF
KUBECONFIG=$work/kubeconfig
KUBECTL=$bin/kubectl
PODLOAD=$bin/podload
APISERVER=https://127.0.0.1:$apiserver_port
PKI=$pki
WEBHOOK_IP=$webhook_ip
WEBHOOK_PORT=$webhook_port
WEBHOOK_CERT_DIR=$secret_dir
RAY_WEBHOOK_PID=${pids[ray-webhook]}
LOGS=$logs
BIN=$bin
E2E_DIR=$e2e
KWOK_TAINT=$kwok_taint
EOF
  echo "everything is still running:"
  echo "  export KUBECONFIG=$work/kubeconfig"
  echo "  kubectl: $bin/kubectl   logs: $logs/   stop: $work/stop.sh"
  echo "  the Go suite: E2E_CLUSTER_ENV=$work/cluster.env go test -v ./ (in tests/e2e)"
}

# run_go_suite: the test binary built from tests/e2e (go test -c) on this
# cluster; each test that has no subtests, and each innermost subtest, counts
# as one check (PASS or FAIL line of its own); a run that ends without a
# verdict for a test (a panic, the timeout) is one more failure.
run_go_suite() {
  local out="$logs/go-suite.log" rc name verdict leaves
  if [ ! -x "$bin/e2e.test" ]; then
    fail "go suite" "tests/e2e did not build: $(tail -3 "$bin/e2e.test.build.log" 2>/dev/null | paste -sd ' ' -)"
    return
  fi
  log "the Go suite: $bin/e2e.test -test.v (log: logs/go-suite.log)"
  (cd "$e2e" && E2E_CLUSTER_ENV="$work/cluster.env" "$bin/e2e.test" -test.v -test.timeout "${E2E_GO_TIMEOUT:-45m}" \
    ${E2E_GO_RUN:+-test.run "$E2E_GO_RUN"}) >"$out" 2>&1
  rc=$?
  # "--- PASS: TestDNS/FQDN (12.3s)" at any depth; a name that has children is not a leaf, unless
  # it failed while none of them did (its own assertion failed).
  leaves="$(sed -n 's/^ *--- \(PASS\|FAIL\|SKIP\): \([^ ]*\) .*/\1 \2/p' "$out" \
    | awk '{v[$2] = $1; n[NR] = $2} END {for (i = 1; i <= NR; i++) {p = 0; f = 0
        for (j in v) if (index(j, n[i] "/") == 1) {p = 1; if (v[j] == "FAIL") f = 1}
        if (!p || (v[n[i]] == "FAIL" && !f)) print v[n[i]], n[i]}}')"
  while read -r verdict name; do
    [ -n "$name" ] || continue
    case "$verdict" in
      PASS) pass "go $name" ;;
      FAIL) fail "go $name" "$(grep -F -- "$name" "$out" | grep -v -- '--- ' | head -3 | cut -c1-300 | paste -sd ' ' -)" ;;
      SKIP) fail "go $name" "skipped: $(grep -A2 -F -- "--- SKIP: $name " "$out" | tail -2 | paste -sd ' ' -)" ;;
    esac
  done <<<"$leaves"
  if [ "$rc" != 0 ] && ! grep -q '^ *--- FAIL' "$out"; then
    fail "go suite" "exit $rc without a failed test: $(tail -5 "$out" | cut -c1-300 | paste -sd ' ' -)"
  fi
  # What a person reads: each test's t.Log lines.
  grep -E '^ +[a-z_]+_test\.go:[0-9]+: ' "$out" | cut -c1-400 | sed 's/^ */     /'
}

# cluster.env: what the Go suite (tests/e2e/framework) needs of this cluster, one KEY=VALUE a line.
write_cluster_env() {
  local args=() a
  while IFS= read -r a; do
    case "$a" in --port=*|--bind=*|--cert-dir=*|--tls-cert=*|--tls-key=*|--probe-port=*) continue ;; esac
    args+=("$a")
  done < <(jq -r '.items[] | select(.kind == "Deployment") | .spec.template.spec.containers[0].args[]' "$work/rendered-static-certs.json")
  cat >"$work/cluster.env" <<ENV
KUBECONFIG=$work/kubeconfig
KUBECTL=$bin/kubectl
BIN=$bin
E2E_DIR=$e2e
WORK=$work
LOGS=$logs
PKI=$pki
APISERVER=https://127.0.0.1:$apiserver_port
NETNS=$netns
PEER_IP=$peer_ip
DNS_IP=$dns_ip
DNS_IP2=$dns_ip2
POD_CIDR=$pod_cidr
KWOK_TAINT=$kwok_taint
CLUSTER_DOMAIN=${cluster_domain:-cluster.local}
RESOLV_CONF=$cluster_dns/resolv.conf
RAY_WEBHOOK=$ray_webhook
WEBHOOK_IP=$webhook_ip
WEBHOOK_IP2=$webhook_ip2
WEBHOOK_PORT=$webhook_port
WEBHOOK_CERT_DIR=$secret_dir
WEBHOOK_ARGS=${args[*]}
SA_DIR=$work/serviceaccount
WEBHOOK_LOG=$logs/ray-webhook.log
WEBHOOK_TOKEN=$work/ray-webhook.token
WEBHOOK_CERTS=$webhook_certs
DEPLOY_SRC=$work/src
RENDERED=$work/rendered-static-certs.json
AUDIT_LOG=$logs/audit.log
REPO=$repo
ENV
}

# ======================================================================== run
service_range="10.200.128.0/20"
service_ip="10.200.128.1"
make_pki
make_pod_range
make_netns
webhook_port=$(free_port) || die "no free port"
start_etcd
start_apiserver
write_kubeconfig
log "kube-apiserver ready on 127.0.0.1:$apiserver_port ($(kc version -o json 2>/dev/null | jq -r .serverVersion.gitVersion))"
start_controller_manager
start_scheduler
start_kwok
start_coredns
start_ray_standin
log "kube-controller-manager, kube-scheduler, KWOK (node kwok-node-0, Pods in $pod_cidr), CoreDNS ($dns_ip) and the Ray stand-in running"
for ns in default kube-system; do ensure_namespace "$ns"; done

# cert-manager's CRDs, for the dry run of the cert-manager overlay.
certmanager_dir="$(module_dir "$e2e/crds" github.com/cert-manager/cert-manager)" || die "cert-manager module not found"
kc create -f "$certmanager_dir/deploy/crds/" >"$logs/crds-cert-manager.log" 2>&1 \
  && kc wait --for condition=established --timeout=60s crd/certificates.cert-manager.io crd/issuers.cert-manager.io >/dev/null \
  || die "cert-manager CRDs did not install (logs/crds-cert-manager.log)"

render_deploy
secret_dir="$work/secret"
mkdir -p "$secret_dir"
secret_swap "$webhook_certs"

# ---- deploy/ installed as shipped (TestInstall/deploy-applies checks what is stored)
jq '{apiVersion: "v1", kind: "List", items: [.items[] | select(.kind == "Namespace")]}' "$work/rendered-static-certs.json" \
  | kc apply -f - >"$logs/apply-namespace.log" 2>&1 || die "applying deploy/'s Namespace failed (logs/apply-namespace.log)"
# The real objects, but the webhook configurations only once the server runs.
jq '{apiVersion: "v1", kind: "List", items: [.items[] | select(.kind == "ServiceAccount" or .kind == "ClusterRole"
  or .kind == "ClusterRoleBinding" or .kind == "Service")]}' "$work/rendered-static-certs.json" \
  | kc apply -f - >"$logs/apply-base.log" 2>&1 || die "applying deploy/'s RBAC and Service failed (logs/apply-base.log)"
kc -n ray-webhook-system create token ray-webhook --duration=2h >"$work/ray-webhook.token" 2>"$logs/token.log" \
  || die "kubectl create token ray-webhook failed"
sa_volume "$work/serviceaccount" "$work/ray-webhook.token"
start_ray_webhook
endpoint_slice "$webhook_port"
jq '{apiVersion: "v1", kind: "List", items: [.items[] | select(.kind | test("WebhookConfiguration$"))]}' \
  "$work/rendered-static-certs.json" | kc apply -f - >"$logs/apply-webhooks.log" 2>&1 \
  || die "applying deploy/'s webhook configurations failed (logs/apply-webhooks.log)"
write_cluster_env
if [ "$up_only" = 1 ]; then
  keep_running
  summary_printed=1
  exit 0
fi

# ---- The Go suite (tests/e2e/*_test.go, framework/): every check
run_go_suite

if [ "$keep" = 1 ]; then
  # Left running for a person to try: the current operator (the newest 1.x release built).
  current="$(operator_releases | grep -v 'v0\.' | sort -V | tail -1)"
  [ -n "$current" ] && install_crds "$current" && start_operator "$current" || log "the current operator did not start"
  keep_running
fi

for f in "${failures[@]}"; do log "failed: $f"; done
[ "$failed" = 0 ] || log "logs kept in $work/logs"
summary_printed=1
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
