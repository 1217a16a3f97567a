#!/usr/bin/env bash
# End-to-end suite: ray-webhook behind a real kube-apiserver, etcd and KubeRay
# operator, all built from Go modules (tests/e2e/, README there).
#
#   scripts/e2e.sh            build what is missing, start, run the scenarios, stop
#   scripts/e2e.sh --keep     the same, then leave everything running and print
#                             the KUBECONFIG and the command that stops it all
#   scripts/e2e.sh --build    only build the Go binaries into tests/e2e/.bin/
#
# Environment: RAY_WEBHOOK_BIN (default build/ray-webhook, built with
# scripts/build.sh when missing), E2E_GO_P (go build -p, default 1),
# E2E_BIN_DIR (where the Go binaries are cached, default tests/e2e/.bin),
# E2E_WORK (work directory, default a new one under /tmp).
#
# Nothing leaves this machine: etcd, kube-apiserver and the operators listen
# on 127.0.0.1; ray-webhook listens on the host end of a veth pair whose other
# end is in a network namespace this script creates (10.200.0.x/30, checked to
# be unused), the address the Service's EndpointSlice names. No kubelet runs:
# Pods are stored and stay Pending.
set -uo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd)"
e2e="$repo/tests/e2e"
bin="${E2E_BIN_DIR:-$e2e/.bin}"
keep=0
build_only=0
for arg in "$@"; do
  case "$arg" in
    --keep) keep=1 ;;
    --build) build_only=1 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
  stamp="$( (cd "$dir" && cat go.mod go.sum $(ls ./*.go 2>/dev/null) $(find cmd/"$name" -name '*.go' 2>/dev/null); \
    sed -n '/^build() {/,/^}/p' "$repo/scripts/e2e.sh") | sha256sum | cut -c1-16) $(go version | cut -d' ' -f3)"
  if [ -x "$bin/$name" ] && [ "$(cat "$bin/$name.stamp" 2>/dev/null)" = "$stamp" ]; then
    return 0
  fi
  log "building $name ($pkg in ${dir#"$repo"/})"
  local t0=$SECONDS
  case "$name" in
    kube-apiserver|kubectl)
      # What k8s.io/kubernetes' hack/lib/version.sh stamps into a release
      # build; without it the binaries report v0.0.0-master.
      local v
      v="$(cd "$dir" && go list -m -f '{{.Version}}' k8s.io/kubernetes)" || return 1
      local x="-X k8s.io/component-base/version"
      ldflags="$x.gitVersion=$v $x.gitMajor=$(cut -d. -f1 <<<"${v#v}") $x.gitMinor=$(cut -d. -f2 <<<"$v")"
      ldflags="$ldflags $x.gitTreeState=clean $x.buildDate=1970-01-01T00:00:00Z"
      ;;
  esac
  if (cd "$dir" && nice -n 10 go build -p="$go_p" -trimpath -ldflags="$ldflags" -o "$bin/$name.tmp" "$pkg") \
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

operator_releases() {
  local d
  for d in "$e2e"/kuberay-v*/; do [ -f "$d/go.mod" ] && basename "$d"; done
}

build_all() {
  mkdir -p "$bin"
  local ok=0 r
  build etcd "$e2e/etcd" . || ok=1
  build kube-apiserver "$e2e" ./cmd/kube-apiserver || ok=1
  build kubectl "$e2e" ./cmd/kubectl || ok=1
  build recorder "$e2e" ./cmd/recorder || ok=1
  build podload "$e2e" ./cmd/podload || ok=1
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
  for name in podload kuberay ray-webhook ray-webhook-b recorder kube-apiserver etcd; do stop_pid "$name"; done
  for name in "${!pids[@]}"; do stop_pid "$name"; done
  [ -n "$netns" ] && ip netns del "$netns" 2>/dev/null
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
skip() { printf 'SKIP %s: %s\n' "$1" "$2"; }

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
subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:$service_ip"
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
    if ! grep -qE "^10\.200\.0\.($((i * 8 + 1))|$((i * 8 + 2))|$((i * 8 + 6)))/" <<<"$used"; then break; fi
  done
  [ "$i" -lt 32 ] || die "no free /29 in 10.200.0.0/24"
  netns="rwe2e-$$"
  local host_if="rwe2e$$h" peer_if="rwe2e$$p"
  # Two replica addresses on the host end, the peer end in the namespace.
  webhook_ip="10.200.0.$((i * 8 + 1))"
  webhook_ip2="10.200.0.$((i * 8 + 2))"
  peer_ip="10.200.0.$((i * 8 + 6))"
  ip netns add "$netns" || die "ip netns add failed (root and CAP_NET_ADMIN are needed)"
  ip link add "$host_if" type veth peer name "$peer_if" || die "ip link add veth failed"
  ip link set "$peer_if" netns "$netns"
  ip addr add "$webhook_ip/29" dev "$host_if"
  ip addr add "$webhook_ip2/29" dev "$host_if"
  ip link set "$host_if" up
  ip netns exec "$netns" ip addr add "$peer_ip/29" dev "$peer_if"
  ip netns exec "$netns" ip link set "$peer_if" up
  ip netns exec "$netns" ip link set lo up
  log "network namespace $netns: host end $webhook_ip and $webhook_ip2 ($host_if), peer $peer_ip"
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
    --profiling=false --v=1 \
    >"$logs/kube-apiserver.log" 2>&1 &
  pids[kube-apiserver]=$!
  wait_pid=${pids[kube-apiserver]} wait_until 120 "kube-apiserver /readyz" curl -fsS --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" \
    "https://127.0.0.1:$apiserver_port/readyz" || { tail -20 "$logs/kube-apiserver.log" >&2; die "kube-apiserver did not become ready"; }
}

# ServiceAccount default in NS (no kube-controller-manager makes it), NS first.
ensure_namespace() {
  kc get namespace "$1" >/dev/null 2>&1 || kc create namespace "$1" >/dev/null
  kc -n "$1" get serviceaccount default >/dev/null 2>&1 || kc -n "$1" create serviceaccount default >/dev/null
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
  kc create --dry-run=client -o json -f "$work/rendered-static-certs.yaml" \
    | jq -s '{apiVersion: "v1", kind: "List", items: [.[] | if .kind == "List" then .items[] else . end]}' \
    >"$work/rendered-static-certs.json" || die "the rendered static-certs overlay does not parse"
}

# The Deployment's container arguments and CLUSTER_DOMAIN, with --port and the
# certificate folder replaced by this run's; the lookup gets the API server on
# loopback, its CA and a token of deploy/'s ServiceAccount.
# start_ray_webhook [RENDERED_JSON]: the Deployment of that rendering (default
# static-certs). rw_name, rw_ip and rw_probe (set before the call) pick the
# replica: default "ray-webhook" on $webhook_ip, logging to logs/ray-webhook.log.
start_ray_webhook() {
  local deployment args=() a name="${rw_name:-ray-webhook}" ip="${rw_ip:-$webhook_ip}"
  local probe="${rw_probe:-}"
  deployment="$(jq -c '.items[] | select(.kind == "Deployment")' "${1:-$work/rendered-static-certs.json}")"
  while IFS= read -r a; do
    case "$a" in --port=*|--bind=*|--cert-dir=*|--tls-cert=*|--tls-key=*|--probe-port=*) continue ;; esac
    args+=("$a")
  done < <(jq -r '.spec.template.spec.containers[0].args[]' <<<"$deployment")
  cluster_domain="$(jq -r '.spec.template.spec.containers[0].env[]? | select(.name == "CLUSTER_DOMAIN") | .value' <<<"$deployment")"
  # The plain-HTTP probe port (deploy/ has --probe-port=8081, for the kubelet),
  # on a free port here, when this build of the server has the flag.
  local ready_url="https://ray-webhook.ray-webhook-system.svc:$webhook_port/readyz"
  if "$ray_webhook" serve --help 2>&1 | grep -q -- '--probe-port'; then
    if [ -z "$probe" ]; then
      [ -n "${probe_port:-}" ] || probe_port=$(free_port) || die "no free port"
      probe=$probe_port
    fi
    args+=("--probe-port=$probe")
    ready_url="http://$ip:$probe/readyz"
  fi
  CLUSTER_DOMAIN="$cluster_domain" "$ray_webhook" serve --cert-dir "$secret_dir" \
    --bind "$ip" --port "$webhook_port" "${args[@]}" \
    --kube-api-server "https://127.0.0.1:$apiserver_port" --kube-ca-file "$pki/ca.crt" \
    --kube-token-file "$work/ray-webhook.token" \
    >>"$logs/$name.log" 2>&1 &
  pids[$name]=$!
  wait_pid=${pids[$name]} wait_until 30 "$name /readyz" curl -fsS --cacert "${webhook_certs_ca:-$webhook_certs/ca.crt}" \
    --resolve "ray-webhook.ray-webhook-system.svc:$webhook_port:$ip" "$ready_url" \
    || die "$name did not become ready (logs/$name.log)"
  log "$name serving on $ip:$webhook_port (args: ${args[*]})"
}

# The serving pair as the kubelet mounts a Secret: DIR/..data is a symlink to a
# timestamped folder, and tls.crt, tls.key, ca.crt link through ..data. A
# rotation writes a new folder and renames a new ..data over the old one.
secret_swap() { # secret_swap FROM_DIR: its tls.crt, tls.key, ca.crt become the Secret's content
  local stamp="..$(date -u +%Y_%m_%d_%H_%M_%S.%N)" f
  mkdir -p "$secret_dir/$stamp"
  for f in tls.crt tls.key ca.crt; do cp "$1/$f" "$secret_dir/$stamp/$f"; done
  ln -sfn "$stamp" "$secret_dir/..data_tmp"
  mv -T "$secret_dir/..data_tmp" "$secret_dir/..data"
  for f in tls.crt tls.key ca.crt; do [ -L "$secret_dir/$f" ] || ln -s "..data/$f" "$secret_dir/$f"; done
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

webhook_log_count() { grep -c -- "$1" "$logs/ray-webhook.log" 2>/dev/null || true; }
# ray-webhook writes its review lines from a thread of its own, at least twice
# a second: wait (at most 5 s) until PATTERN has more than BEFORE lines.
webhook_log_grows() { # webhook_log_grows PATTERN BEFORE [BY]
  local i
  for ((i = 0; i < 50; i++)); do
    [ "$(webhook_log_count "$1")" -ge $(($2 + ${3:-1})) ] && return 0
    sleep 0.1
  done
  return 1
}

# ---------------------------------------------------------------- KubeRay
operator_dir() { module_dir "$e2e/$1" github.com/ray-project/kuberay/ray-operator; }

install_crds() { # install_crds RELEASE
  local dir
  dir="$(operator_dir "$1")" || return 1
  kc apply --server-side --force-conflicts -f "$dir/config/crd/bases/" >"$logs/crds-$1.log" 2>&1 || return 1
  kc wait --for condition=established --timeout=60s -f "$dir/config/crd/bases/" >>"$logs/crds-$1.log" 2>&1
}

remove_crds() { # remove_crds RELEASE: its custom resources first (finalizers dropped: the operator is stopped)
  local dir kind
  dir="$(operator_dir "$1")" || return 1
  for kind in rayclusters rayjobs rayservices raycronjobs; do
    kc get "$kind.ray.io" -A -o name >/dev/null 2>&1 || continue
    kc get "$kind.ray.io" -A -o json | jq -r '.items[] | "\(.metadata.namespace) \(.metadata.name)"' |
      while read -r ns name; do
        kc -n "$ns" patch "$kind.ray.io" "$name" --type=merge -p '{"metadata":{"finalizers":null}}' >/dev/null 2>&1
      done
  done
  kc delete --timeout=60s -f "$dir/config/crd/bases/" >>"$logs/crds-$1.log" 2>&1
}

start_operator() { # start_operator RELEASE
  local metrics probe
  metrics=$(free_port) && probe=$(free_port) || return 1
  KUBECONFIG="$work/kubeconfig" "$bin/$1" --metrics-addr "127.0.0.1:$metrics" \
    --health-probe-bind-address "127.0.0.1:$probe" --enable-leader-election=false \
    >"$logs/operator-$1.log" 2>&1 &
  pids[kuberay]=$!
  wait_pid=${pids[kuberay]} wait_until 60 "operator $1 /readyz" curl -fsS "http://127.0.0.1:$probe/readyz" || {
    tail -20 "$logs/operator-$1.log" >&2
    return 1
  }
  log "operator $1 running (metrics 127.0.0.1:$metrics, probes 127.0.0.1:$probe)"
}

pods_of() { # pods_of NS CLUSTER NODE_TYPE: stored Pods as a JSON list
  kc -n "$1" get pods -l "ray.io/cluster=$2,ray.io/node-type=$3" -o json
}
count_pods() { [ "$(pods_of "$1" "$2" "$3" | jq '.items | length')" -ge "$4" ]; }

# env names that occur twice in one container or init container (empty: none)
duplicate_env() { jq -r '.items[] | .metadata.name as $p | (.spec.containers + (.spec.initContainers // []))[]
  | .name as $c | [.env[]?.name] | group_by(.) | map(select(length > 1) | .[0])[] | "\($p)/\($c): \(.)"'; }

# ======================================================================== run
service_range="10.200.128.0/20"
service_ip="10.200.128.1"
make_pki
make_netns
webhook_port=$(free_port) || die "no free port"
start_etcd
start_apiserver
write_kubeconfig
log "kube-apiserver ready on 127.0.0.1:$apiserver_port ($(kc version -o json 2>/dev/null | jq -r .serverVersion.gitVersion))"
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

# ---- 1. deploy/ on the real API server
s1="1 deploy/ overlays pass apply --dry-run=server; Namespace, RBAC, Service, webhooks applied"
s1_ok=1
jq '{apiVersion: "v1", kind: "List", items: [.items[] | select(.kind == "Namespace")]}' "$work/rendered-static-certs.json" \
  | kc apply -f - >"$logs/apply-namespace.log" 2>&1 || s1_ok=0
for o in static-certs cert-manager; do
  if ! kc apply --dry-run=server -f "$work/rendered-$o.yaml" >"$logs/dry-run-$o.log" 2>&1; then
    s1_ok=0; s1_why="overlay $o: $(grep -v '^Warning' "$logs/dry-run-$o.log" | tail -3 | tr '\n' ' ')"
  fi
done
# The real objects, but the webhook configurations only once the server runs.
jq '{apiVersion: "v1", kind: "List", items: [.items[] | select(.kind == "ServiceAccount" or .kind == "ClusterRole"
  or .kind == "ClusterRoleBinding" or .kind == "Service")]}' "$work/rendered-static-certs.json" \
  | kc apply -f - >"$logs/apply-base.log" 2>&1 || { s1_ok=0; s1_why="apply: $(tail -2 "$logs/apply-base.log")"; }
kc -n ray-webhook-system create token ray-webhook --duration=2h >"$work/ray-webhook.token" 2>"$logs/token.log" \
  || die "kubectl create token ray-webhook failed"
start_ray_webhook
endpoint_slice "$webhook_port"
jq '{apiVersion: "v1", kind: "List", items: [.items[] | select(.kind | test("WebhookConfiguration$"))]}' \
  "$work/rendered-static-certs.json" | kc apply -f - >"$logs/apply-webhooks.log" 2>&1 \
  || { s1_ok=0; s1_why="apply webhooks: $(tail -2 "$logs/apply-webhooks.log")"; }
ca_b64="$(base64 -w0 <"$webhook_certs/ca.crt")"
for k in mutatingwebhookconfiguration validatingwebhookconfiguration; do
  got="$(kc get "$k" ray-webhook -o json 2>/dev/null | jq -r '[.webhooks[].clientConfig.caBundle] | unique | join(",")')"
  [ "$got" = "$ca_b64" ] || { s1_ok=0; s1_why="$k ray-webhook: caBundle is not the throw-away CA"; }
  svc="$(kc get "$k" ray-webhook -o json 2>/dev/null | jq -r '[.webhooks[].clientConfig.service.name] | unique | join(",")')"
  [ "$svc" = "ray-webhook" ] || { s1_ok=0; s1_why="$k ray-webhook: clientConfig.service is $svc"; }
done
for o in namespace/ray-webhook-system clusterrole/ray-webhook clusterrolebinding/ray-webhook; do
  kc get "$o" >/dev/null 2>&1 || { s1_ok=0; s1_why="$o not stored"; }
done
for o in serviceaccount/ray-webhook service/ray-webhook; do
  kc -n ray-webhook-system get "$o" >/dev/null 2>&1 || { s1_ok=0; s1_why="$o not stored"; }
done
# The Service resolves through the EndpointSlice: a plain non-Ray Pod in a
# namespace that opts in to validate-all-pods reaches the server (failurePolicy
# Ignore there, so the server's log line is the proof).
ensure_namespace e2e-plain
kc label namespace e2e-plain ray-webhook.io/validate-all-pods=true --overwrite >/dev/null
before=$(webhook_log_count 'path=/validate')
kc -n e2e-plain run routed-probe --image=registry.k8s.io/pause:3.10 --restart=Never >/dev/null 2>&1
webhook_log_grows 'path=/validate' "$before" || { s1_ok=0; s1_why="a Pod in an opted-in namespace did not reach ray-webhook through the Service"; }
kc label namespace e2e-plain ray-webhook.io/validate-all-pods- >/dev/null
[ "$s1_ok" = 1 ] && pass "$s1" || fail "$s1" "${s1_why:-see logs/}"

# ---- 25a, 25b, 25c. charts/ray-webhook, offline and on the API server (tests/e2e/chart.sh)
# shellcheck source=../tests/e2e/chart.sh
source "$e2e/chart.sh"
chart_checks

# ---- 3 and 4. KubeRay v0.3.0: bare service names; the shallow copy's second /dev/shm
legacy=kuberay-v0.3.0
if [ -x "$bin/$legacy" ] && install_crds "$legacy" && start_operator "$legacy"; then
  ns=e2e-kuberay-0-3
  ensure_namespace "$ns"
  kc -n "$ns" apply -f - >"$logs/raycluster-legacy.log" 2>&1 <<'EOF'
apiVersion: ray.io/v1alpha1
kind: RayCluster
metadata:
  name: rc-legacy
spec:
  rayVersion: "1.13.0"
  headGroupSpec:
    serviceType: ClusterIP
    rayStartParams: {dashboard-host: "0.0.0.0", block: "true"}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:1.13.0
          resources: {requests: {cpu: "1", memory: 1G}, limits: {cpu: "1", memory: 1G}}
  workerGroupSpecs:
  - groupName: small
    replicas: 2
    minReplicas: 0
    maxReplicas: 4
    rayStartParams: {block: "true"}
    template:
      spec:
        initContainers:
        - name: init-myservice
          image: busybox:1.28
          command: ["sh", "-c", "until nslookup $RAY_IP.$(cat /var/run/secrets/kubernetes.io/serviceaccount/namespace).svc.cluster.local; do sleep 2; done"]
        containers:
        - name: ray-worker
          image: rayproject/ray:1.13.0
          resources: {requests: {cpu: "1", memory: 1G}, limits: {cpu: "1", memory: 1G}}
EOF
  wait_until 120 "two stored workers of rc-legacy" count_pods "$ns" rc-legacy worker 2
  workers="$(pods_of "$ns" rc-legacy worker)"
  svc=rc-legacy-head-svc
  fqdn="$svc.$ns.svc.${cluster_domain:-cluster.local}"

  s3="3 KubeRay v0.3.0 (for v0.4.0): stored workers carry FQ_RAY_IP, RAY_IP and an FQDN --address, Ray container and every init container"
  bad="$(jq -r --arg f "$fqdn" --arg s "$svc" '
    .items[] | .metadata.name as $p |
    ((.spec.containers[0] | select(
        ([.env[]? | select(.name == "FQ_RAY_IP" and .value == $f)] | length) != 1
        or ([.env[]? | select(.name == "RAY_IP" and .value == $s)] | length) != 1
        or ((.command + .args) | join(" ") | contains("--address=" + $f + ":") | not)) | "\($p)/\(.name)"),
     (.spec.initContainers[]? | select(
        ([.env[]? | select(.name == "FQ_RAY_IP" and .value == $f)] | length) != 1
        or ([.env[]? | select(.name == "RAY_IP" and .value == $s)] | length) != 1) | "\($p)/init \(.name)"))' <<<"$workers")"
  n="$(jq '.items | length' <<<"$workers")"
  inits="$(jq '[.items[].spec.initContainers[]?] | length' <<<"$workers")"
  if [ "$n" -ge 2 ] && [ "$inits" -ge 2 ] && [ -z "$bad" ]; then pass "$s3"; else fail "$s3" "workers=$n init=$inits missing on: $bad"; fi

  s4="4 KubeRay v0.3.0: the second worker's two /dev/shm mounts are refused with ray-webhook's explanation (operator log)"
  wait_until 30 "the refusal in the operator log" grep -q 'mounts \\*"/dev/shm\\*" 2 times' "$logs/operator-$legacy.log"
  quote="$(grep -o 'admission webhook \\*"mutate.pods.ray-webhook.io\\*" denied the request: container [^.]*\.' \
    "$logs/operator-$legacy.log" | head -1)"
  shm_max="$(jq '[.items[] | .spec.containers[0].volumeMounts | map(select(.mountPath == "/dev/shm")) | length] | max' <<<"$workers")"
  # ... and not the API server's own validation error, which names the field:
  # spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/dev/shm": must be unique
  if [ -n "$quote" ] && [ "$shm_max" = 1 ] && ! grep -q 'mountPath: Invalid value' "$logs/operator-$legacy.log"; then
    pass "$s4"
    printf '     operator log (logs/operator-%s.log): %s\n' "$legacy" "$(sed 's/\\"/"/g' <<<"$quote")"
  else
    fail "$s4" "refusal not in the operator log (quote='$quote', most /dev/shm mounts in a stored worker: $shm_max)"
  fi

  # deploy/examples/cluster-domain: the same server with CLUSTER_DOMAIN=example.internal;
  # a third worker, created after the restart, gets that domain.
  s3b="3b KubeRay v0.3.0 with deploy/examples/cluster-domain: a new worker's FQ_RAY_IP and --address use its CLUSTER_DOMAIN"
  kc kustomize "$work/src/deploy/examples/cluster-domain" 2>>"$logs/kustomize-cluster-domain.log" \
    | kc create --dry-run=client -o json -f - 2>>"$logs/kustomize-cluster-domain.log" \
    | jq -s '{apiVersion: "v1", kind: "List", items: [.[] | if .kind == "List" then .items[] else . end]}' \
    >"$work/rendered-cluster-domain.json"
  base_domain="$cluster_domain"
  stop_pid ray-webhook
  start_ray_webhook "$work/rendered-cluster-domain.json"
  other_domain="$cluster_domain"
  known="$(jq -r '[.items[].metadata.name] | join(" ")' <<<"$workers")"
  kc -n "$ns" patch raycluster.ray.io rc-legacy --type=json \
    -p '[{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": 3}]' >>"$logs/raycluster-legacy.log" 2>&1
  wait_until 60 "a third worker of rc-legacy" count_pods "$ns" rc-legacy worker 3
  new_worker="$(pods_of "$ns" rc-legacy worker | jq -c --arg known " $known " '[.items[] | select(.metadata.name as $n | $known | contains(" " + $n + " ") | not)][0]')"
  fq="$(jq -r '.spec.containers[0].env[]? | select(.name == "FQ_RAY_IP") | .value' <<<"$new_worker")"
  want="$svc.$ns.svc.$other_domain"
  if [ "$other_domain" != "$base_domain" ] && [ "$fq" = "$want" ] \
    && jq -e --arg a "--address=$want:" '(.spec.containers[0].command + .spec.containers[0].args) | join(" ") | contains($a)' <<<"$new_worker" >/dev/null \
    && jq -e --arg f "$want" '[.spec.initContainers[]? | .env[]? | select(.name == "FQ_RAY_IP" and .value == $f)] | length >= 1' <<<"$new_worker" >/dev/null; then
    pass "$s3b"
  else
    fail "$s3b" "CLUSTER_DOMAIN $base_domain -> $other_domain; new worker FQ_RAY_IP=$fq, want $want"
  fi
  stop_pid ray-webhook
  start_ray_webhook

  # ---- 22a. v0.3.0, a worker template with a sidecar first and the Ray container
  # second, marked with env ray=true. The v0.3.0 operator picks the Ray container
  # the same way (ray-operator controllers/ray/common/pod.go at this version:
  # BuildPod -> getRayContainerIndex, the first container with env ray=true,
  # else containers[0]; setContainerEnvVars puts RAY_IP, RAY_PORT, RAY_ADDRESS
  # and the `ray start --address=` command on that container). One replica: a
  # second one would hit the shallow copy of scenario 4.
  s22a="22a KubeRay v0.3.0, sidecar listed first, Ray container second (env ray=true): FQ_RAY_IP, RAY_IP and the FQDN --address on containers[1], nothing added to the sidecar"
  sc=rc-sidecar
  kc -n "$ns" apply -f - >"$logs/raycluster-sidecar.log" 2>&1 <<'EOF'
apiVersion: ray.io/v1alpha1
kind: RayCluster
metadata:
  name: rc-sidecar
spec:
  rayVersion: "1.13.0"
  headGroupSpec:
    serviceType: ClusterIP
    rayStartParams: {dashboard-host: "0.0.0.0", block: "true"}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:1.13.0
          resources: {requests: {cpu: "1", memory: 1G}, limits: {cpu: "1", memory: 1G}}
  workerGroupSpecs:
  - groupName: sidecar-first
    replicas: 1
    minReplicas: 0
    maxReplicas: 1
    rayStartParams: {block: "true"}
    template:
      spec:
        containers:
        - name: log-shipper
          image: busybox:1.28
          command: ["sh", "-c", "sleep 3600"]
          env: [{name: LOG_DIR, value: /tmp/ray/session_latest/logs}]
        - name: ray-worker
          image: rayproject/ray:1.13.0
          env: [{name: ray, value: "true"}]
          resources: {requests: {cpu: "1", memory: 1G}, limits: {cpu: "1", memory: 1G}}
EOF
  wait_until 90 "the worker of $sc" count_pods "$ns" "$sc" worker 1
  sc_worker="$(pods_of "$ns" "$sc" worker | jq -c '.items[0] // {}')"
  sc_svc="$sc-head-svc"
  sc_fqdn="$sc_svc.$ns.svc.${cluster_domain:-cluster.local}"
  # What is wrong, as a list of reasons (empty: the check holds).
  why22a="$(jq -r --arg f "$sc_fqdn" --arg s "$sc_svc" '
    def n($c; $name): [$c.env[]? | select(.name == $name)] | length;
    def cmd($c): ($c.command // []) + ($c.args // []) | join(" ");
    (.spec.containers // []) as $cs |
    if ($cs | length) != 2 then "the worker has \($cs | length) containers, not 2"
    else
      $cs[0] as $side | $cs[1] as $ray |
      (if $side.name != "log-shipper" or $ray.name != "ray-worker" then "containers are \([$cs[].name])" else empty end),
      # the operator chose containers[1] (its own env: RAY_PORT and RAY_ADDRESS, which ray-webhook never adds)
      (if n($ray; "RAY_PORT") != 1 or n($ray; "RAY_ADDRESS") != 1 then "the operator did not put its env on containers[1]" else empty end),
      (if (cmd($ray) | contains("ray start")) | not then "no ray start on containers[1]" else empty end),
      (if [$ray.env[]? | select(.name == "FQ_RAY_IP" and .value == $f)] | length != 1 or n($ray; "FQ_RAY_IP") != 1
       then "containers[1] FQ_RAY_IP: \([$ray.env[]? | select(.name == "FQ_RAY_IP") | .value])" else empty end),
      (if [$ray.env[]? | select(.name == "RAY_IP" and .value == $s)] | length != 1 or n($ray; "RAY_IP") != 1
       then "containers[1] RAY_IP: \([$ray.env[]? | select(.name == "RAY_IP") | .value])" else empty end),
      (if (cmd($ray) | test("--address=" + ($f | gsub("\\."; "\\.")) + ":[0-9]+( |$)")) | not
       then "containers[1] has no --address=\($f):PORT (\(cmd($ray) | match("--address[= ][^ ]*").string? // "none"))" else empty end),
      # the sidecar exactly as the template wrote it
      (if ($side.env // []) != [{"name": "LOG_DIR", "value": "/tmp/ray/session_latest/logs"}]
       then "sidecar env changed: \($side.env)" else empty end),
      (if ($side.command // []) != ["sh", "-c", "sleep 3600"] or ($side.args // []) != []
       then "sidecar command changed: \(cmd($side))" else empty end)
    end' <<<"$sc_worker" | paste -sd ';' -)"
  [ "$(jq -r '.metadata.name // ""' <<<"$sc_worker")" != "" ] || why22a="no worker of $sc stored"
  if [ -z "$why22a" ]; then pass "$s22a"; else fail "$s22a" "$why22a"; fi
  printf '     worker %s: containers[1] %s: FQ_RAY_IP=%s RAY_IP=%s %s; containers[0] %s env: %s\n' \
    "$(jq -r '.metadata.name // "none"' <<<"$sc_worker")" \
    "$(jq -r '.spec.containers[1].name // "-"' <<<"$sc_worker")" \
    "$(jq -r '[.spec.containers[1].env[]? | select(.name == "FQ_RAY_IP") | .value] | join(",")' <<<"$sc_worker")" \
    "$(jq -r '[.spec.containers[1].env[]? | select(.name == "RAY_IP") | .value] | join(",")' <<<"$sc_worker")" \
    "$(jq -r '(.spec.containers[1].command // []) + (.spec.containers[1].args // []) | join(" ") | (match("--address[= ][^ ]*").string? // "no --address")' <<<"$sc_worker")" \
    "$(jq -r '.spec.containers[0].name // "-"' <<<"$sc_worker")" \
    "$(jq -r '[.spec.containers[0].env[]? | .name] | join(",")' <<<"$sc_worker")"
  stop_pid kuberay
  remove_crds "$legacy"
else
  skip "3/4 KubeRay v0.3.0" "not built or did not start (tests/e2e/.bin/$legacy.build.log, logs/operator-$legacy.log)"
fi
skip "3 KubeRay v0.4.0" "the module proxy does not serve commit 7374e2cf6a0b (tests/e2e/README.md); v0.3.0 above has the same bare names"

# ---- 2, 5, 6, 8: the current operator
current="$(operator_releases | grep -v 'v0\.' | sort -V | tail -1)"
cluster=rc-current
ns=e2e-kuberay-current
if [ -n "$current" ] && [ -x "$bin/$current" ] && install_crds "$current" && start_operator "$current"; then
  ensure_namespace "$ns"
  kc -n "$ns" apply -f - >"$logs/raycluster-current.log" 2>&1 <<EOF
apiVersion: ray.io/v1
kind: RayCluster
metadata:
  name: $cluster
spec:
  rayVersion: "2.52.0"
  headGroupSpec:
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-head
          image: rayproject/ray:2.52.0
          resources: {requests: {cpu: "1", memory: 2G}, limits: {cpu: "1", memory: 2G}}
  workerGroupSpecs:
  - groupName: workers
    replicas: 2
    minReplicas: 0
    maxReplicas: 4
    rayStartParams: {}
    template:
      spec:
        containers:
        - name: ray-worker
          image: rayproject/ray:2.52.0
          resources: {requests: {cpu: "1", memory: 1G}, limits: {cpu: "1", memory: 1G}}
EOF
  wait_until 120 "head and two workers of $cluster" count_pods "$ns" "$cluster" worker 2
  count_pods "$ns" "$cluster" head 1

  s2="2 KubeRay $current: head stored as $cluster-head; workers stored as the operator built them (no patch, no duplicate env)"
  heads="$(pods_of "$ns" "$cluster" head)"
  workers="$(pods_of "$ns" "$cluster" worker)"
  head_names="$(jq -r '[.items[].metadata.name] | join(",")' <<<"$heads")"
  n="$(jq '.items | length' <<<"$workers")"
  dups="$(duplicate_env <<<"$workers")"
  # ray-webhook's own line for each worker review: no patch operation.
  webhook_log_grows "path=/mutate uid=[^ ]* namespace=$ns pod=$cluster-workers-worker- " 0 2
  patched="$(grep 'path=/mutate' "$logs/ray-webhook.log" | grep "namespace=$ns " | grep "pod=$cluster-workers-worker-" | grep -vc ' patch_ops=0 ')"
  reviewed="$(grep 'path=/mutate' "$logs/ray-webhook.log" | grep "namespace=$ns " | grep -c "pod=$cluster-workers-worker-")"
  fqdn_ok="$(jq --arg f "$cluster-head-svc.$ns.svc.${cluster_domain:-cluster.local}" \
    '[.items[].spec.containers[0].env[]? | select(.name == "FQ_RAY_IP" and .value == $f)] | length' <<<"$workers")"
  if [ "$head_names" = "$cluster-head" ] && [ "$n" -ge 2 ] && [ -z "$dups" ] && [ "$patched" = 0 ] \
    && [ "$reviewed" -ge 2 ] && [ "$fqdn_ok" -ge 2 ]; then
    pass "$s2"
  else
    fail "$s2" "heads=[$head_names] workers=$n duplicate env=[$dups] worker reviews=$reviewed patched=$patched FQ_RAY_IP from the operator=$fqdn_ok"
  fi

  # ---- 2b. the clusters a RayJob and a RayService make (named <owner>-<5 random>).
  # Neither operator controller calls the Ray dashboard before the head Pod is
  # running and ready (rayjob_controller.go: waits for RayCluster state Ready;
  # rayservice_controller.go: isHeadPodRunningAndReady), so with no kubelet no
  # request leaves for a head Service address.
  s2b="2b KubeRay $current: the RayCluster of a RayJob and of a RayService: head <cluster>-head, workers unpatched"
  owned=e2e-kuberay-owned
  ensure_namespace "$owned"
  group='{groupName: workers, replicas: 1, minReplicas: 0, maxReplicas: 2, rayStartParams: {},
      template: {spec: {containers: [{name: ray-worker, image: "rayproject/ray:2.52.0",
        resources: {requests: {cpu: "1", memory: 1G}, limits: {cpu: "1", memory: 1G}}}]}}}'
  head='{rayStartParams: {}, template: {spec: {containers: [{name: ray-head, image: "rayproject/ray:2.52.0",
        resources: {requests: {cpu: "1", memory: 2G}, limits: {cpu: "1", memory: 2G}}}]}}}'
  kc -n "$owned" apply -f - >"$logs/rayjob-rayservice.log" 2>&1 <<EOF
apiVersion: ray.io/v1
kind: RayJob
metadata: {name: job-e2e}
spec:
  entrypoint: python -c "print(1)"
  rayClusterSpec: {rayVersion: "2.52.0", headGroupSpec: $head, workerGroupSpecs: [$group]}
---
apiVersion: ray.io/v1
kind: RayService
metadata: {name: service-e2e}
spec:
  serveConfigV2: |
    applications: []
  rayClusterConfig: {rayVersion: "2.52.0", headGroupSpec: $head, workerGroupSpecs: [$group]}
EOF
  owned_clusters() {
    kc -n "$owned" get rayclusters.ray.io -o json | jq -r '.items[] | "\(.metadata.ownerReferences[0].kind) \(.metadata.name)"'
  }
  owned_ready() { # both child clusters with a head and a worker stored
    local k c n=0
    while read -r k c; do count_pods "$owned" "$c" head 1 && count_pods "$owned" "$c" worker 1 && n=$((n + 1)); done \
      < <(owned_clusters)
    [ "$n" -ge 2 ]
  }
  wait_until 90 "the RayJob's and the RayService's clusters" owned_ready
  why=""
  kinds=""
  while read -r kind c; do
    kinds="$kinds $kind"
    h="$(pods_of "$owned" "$c" head | jq -r '[.items[].metadata.name] | join(",")')"
    w="$(pods_of "$owned" "$c" worker)"
    d="$(duplicate_env <<<"$w")"
    webhook_log_grows "path=/mutate uid=[^ ]* namespace=$owned pod=[^ ]*-worker- cluster=$c " 0
    r="$(grep 'path=/mutate' "$logs/ray-webhook.log" | grep "namespace=$owned " | grep "cluster=$c " \
      | grep -c 'pod=[^ ]*-worker- ')"
    p="$(grep 'path=/mutate' "$logs/ray-webhook.log" | grep "namespace=$owned " | grep "cluster=$c " \
      | grep 'pod=[^ ]*-worker- ' | grep -vc ' patch_ops=0 ')"
    [ "$r" -ge 1 ] || why="$why $kind cluster $c: no worker review logged;"
    [ "$h" = "$c-head" ] || why="$why $kind cluster $c: heads [$h];"
    [ "$(jq '.items | length' <<<"$w")" -ge 1 ] || why="$why $kind cluster $c: no worker;"
    [ -z "$d" ] || why="$why $kind cluster $c: duplicate env $d;"
    [ "$p" = 0 ] || why="$why $kind cluster $c: $p worker(s) patched;"
    printf '     %s cluster %s: head %s\n' "$kind" "$c" "$h"
  done < <(owned_clusters)
  grep -q RayJob <<<"$kinds" || why="$why no RayJob cluster;"
  grep -q RayService <<<"$kinds" || why="$why no RayService cluster;"
  [ -z "$why" ] && pass "$s2b" || fail "$s2b" "$why"

  # ---- 22b. a RayService upgrade whose clusters' names are over 50 characters.
  # RayService names are at most 47 characters (ray-operator
  # controllers/ray/utils/constant.go: MaxRayServiceNameLength =
  # MaxRayClusterNameLength - 6 = 47; validation.go ValidateRayServiceMetadata),
  # and each cluster is <service>-<5 random> (utils.GenerateRayClusterName), 53
  # characters here. KubeRay's own head name is the first 50 plus -head
  # (utils.PodName), so the names of the old and the new cluster share 48
  # characters and collide when the first 2 of the 5 random characters agree
  # (1 in 27^2 = 729, k8s.io/apimachinery rand's alphabet).
  # What makes v1.6.2 create a second cluster with no Pod ever ready
  # (rayservice_controller.go): the first cluster stays pending (never promoted,
  # its head is never ready); when spec.rayClusterConfig changes so that its
  # hash (utils.GenerateHashWithoutReplicasAndWorkersToDelete) differs from the
  # pending cluster's and not only by worker groups appended at the end,
  # calculateStatus -> shouldPrepareNewCluster returns
  # isZeroDowntimeUpgradeEnabled (true with no upgradeStrategy and no
  # ENABLE_ZERO_DOWNTIME=false) and writes a new
  # status.pendingServiceStatus.rayClusterName; the next reconcileRayCluster
  # creates it (createRayClusterInstance). The replaced cluster is deleted by
  # cleanUpRayClusterInstance only after RayClusterDeletionDelayDuration (60 s),
  # and its Pods stay (no garbage collector here), as on a real cluster during
  # an upgrade. The upgrade itself cannot complete (no kubelet).
  # Because the random draw collides only 1 time in 729, a third cluster makes
  # the collision certain: the script writes the status field the operator
  # writes when it prepares a cluster (pendingServiceStatus.rayClusterName),
  # with the current pending cluster's first 50 characters and 3 other random
  # characters, and the operator creates that cluster and its head itself
  # (reconcileRayCluster: a pending name without a cluster is created).
  up=e2e-kuberay-upgrade
  rs=e2e-rayservice-upgraded-with-a-name-of-47-chars
  s22b="22b KubeRay $current: RayService (${#rs} characters) upgrade: each new cluster's head is stored (no 409) under a name other than the old head's, at most 63 characters, never two live heads of one cluster; a forced KubeRay-name collision included"
  ensure_namespace "$up"
  kc -n "$up" apply -f - >"$logs/rayservice-upgrade.log" 2>&1 <<EOF
apiVersion: ray.io/v1
kind: RayService
metadata: {name: $rs}
spec:
  serveConfigV2: |
    applications: []
  rayClusterConfig: {rayVersion: "2.52.0", headGroupSpec: $head, workerGroupSpecs: [$group]}
EOF
  rs_pending() { kc -n "$up" get rayservice.ray.io "$rs" -o jsonpath='{.status.pendingServiceStatus.rayClusterName}' 2>/dev/null; }
  head_of() { pods_of "$up" "$1" head | jq -r '[.items[].metadata.name] | join(",")'; }
  kuberay_head() { printf '%s-head' "$(tr 'A-Z' 'a-z' <<<"${1:0:50}")"; }
  polls=0
  two_heads=""
  poll_heads() { # every live head Pod of the namespace, grouped by ray.io/cluster: none may have two
    local j v
    j="$(kc -n "$up" get pods -l ray.io/node-type=head -o json 2>/dev/null)" || return 0
    polls=$((polls + 1))
    v="$(jq -r '[.items[] | select(.metadata.deletionTimestamp == null and .status.phase != "Succeeded" and .status.phase != "Failed")]
      | group_by(.metadata.labels["ray.io/cluster"]) | map(select(length > 1))[]
      | "\(.[0].metadata.labels["ray.io/cluster"]): \([.[].metadata.name] | join(","))"' <<<"$j")"
    [ -z "$v" ] || two_heads="$two_heads $v;"
  }
  # cluster_with_head OLD: the pending cluster is not OLD and its head is stored (sets $pending)
  cluster_with_head() {
    poll_heads
    pending="$(rs_pending)"
    [ -n "$pending" ] && [ "$pending" != "$1" ] && [ -n "$(head_of "$pending")" ]
  }
  owner_of() { # CLUSTER=KIND/NAME of its controller, read when the cluster is new (a replaced one is deleted after 60 s)
    printf '%s=%s' "$1" "$(kc -n "$up" get raycluster.ray.io "$1" -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}' 2>&1)"
  }
  why=""
  wait_until 90 "the first cluster of RayService $rs and its head" cluster_with_head "" || why="$why no first cluster with a head;"
  c1="$pending"; h1="$(head_of "$c1")"; o1="$(owner_of "$c1")"
  # The upgrade: a head rayStartParams entry changes the cluster hash.
  kc -n "$up" patch rayservice.ray.io "$rs" --type=merge \
    -p '{"spec":{"rayClusterConfig":{"headGroupSpec":{"rayStartParams":{"num-cpus":"0"}}}}}' >>"$logs/rayservice-upgrade.log" 2>&1
  wait_until 90 "the new cluster of RayService $rs and its head" cluster_with_head "$c1" || why="$why no new cluster with a head after the spec change;"
  c2="$pending"; h2="$(head_of "$c2")"; o2="$(owner_of "$c2")"
  # The forced collision: KubeRay's own names of $c2 and $c3 are the same.
  tail3=x22; [ "${c2:50:3}" = "$tail3" ] && tail3=v77
  c3="${c2:0:50}$tail3"
  if [ -n "$c2" ] && [ "$c2" != "$c1" ]; then
    kc -n "$up" patch rayservice.ray.io "$rs" --subresource=status --type=merge \
      -p "{\"status\":{\"pendingServiceStatus\":{\"rayClusterName\":\"$c3\"}}}" >>"$logs/rayservice-upgrade.log" 2>&1 \
      || why="$why patching status.pendingServiceStatus.rayClusterName failed;"
    wait_until 90 "cluster $c3 (KubeRay head name as $c2's) and its head" cluster_with_head "$c2"  # (checked below)
  fi
  h3="$(head_of "$c3")"; o3="$(owner_of "$c3")"
  for ((i = 0; i < 6; i++)); do poll_heads; sleep 0.5; done
  for pair in "$c1=$h1" "$c2=$h2" "$c3=$h3"; do
    c="${pair%%=*}"; h="${pair#*=}"
    [ -n "$c" ] || continue
    [ -n "$h" ] || { why="$why cluster $c: no head stored;"; continue; }
    [[ "$h" == *,* ]] && why="$why cluster $c: heads $h;"
    [ "${#h}" -le 63 ] || why="$why head $h is ${#h} characters;"
    [ "$h" = "$(kuberay_head "$c")" ] && why="$why head $h is KubeRay's own name;"
  done
  [ "${#c1}" -gt 50 ] && [ "${#c2}" -gt 50 ] || why="$why cluster names ${#c1}/${#c2} characters, not over 50;"
  for o in "$o1" "$o2" "$o3"; do  # each cluster made by the operator for the RayService
    [ "${o#*=}" = "RayService/$rs" ] || why="$why RayCluster ${o%%=*} owner: ${o#*=};"
  done
  [ -n "$h2" ] && [ "$h2" != "$h1" ] || why="$why the new head is named as the old one ($h1);"
  [ -n "$h3" ] && [ "$h3" != "$h2" ] || why="$why the forced-collision head is named as $c2's ($h2);"
  [ "$(kuberay_head "$c3")" = "$(kuberay_head "$c2")" ] || why="$why (script) KubeRay's names of $c2 and $c3 differ;"
  refused_here="$(grep "already exists" "$logs/operator-$current.log" | grep -c -- "$rs" | tr -d ' ')"
  [ "$refused_here" = 0 ] || why="$why the operator logged $refused_here 'already exists' errors for $rs's Pods;"
  [ -z "$two_heads" ] || why="$why two live heads of one cluster at a poll:$two_heads"
  [ "$polls" -gt 0 ] || why="$why the heads were never listed;"
  if [ -z "$why" ]; then pass "$s22b"; else fail "$s22b" "$why"; fi
  collide12="no"; [ "$(kuberay_head "$c1")" = "$(kuberay_head "$c2")" ] && collide12="yes"
  printf '     the upgrade cannot complete without a kubelet: no Pod ever becomes ready, so no cluster of %s becomes active; the operator replaced its outdated pending cluster by a new one (rayservice_controller.go shouldPrepareNewCluster) and keeps the old one for 60 s\n' "$rs"
  printf '     old cluster %s: head %s (KubeRay would name it %s)\n' "$c1" "$h1" "$(kuberay_head "$c1")"
  printf '     new cluster %s: head %s (KubeRay would name it %s; same as the old: %s, which happens 1 time in 729)\n' "$c2" "$h2" "$(kuberay_head "$c2")" "$collide12"
  printf '     forced collision, status.pendingServiceStatus.rayClusterName set by the script, cluster and head made by the operator: %s: head %s (KubeRay would name it %s, as %s'"'"'s)\n' \
    "$c3" "$h3" "$(kuberay_head "$c3")" "$c2"
  printf '     live heads listed at %s polls, two of one cluster: %s\n' "$polls" "${two_heads:-never}"
  quote="$(grep "already exists" "$logs/operator-$current.log" | grep -- "$rs" | grep -o 'FailedCreateHeadPod[^"]*\\"[^\\]*\\" already exists' | head -1)"
  [ -z "$quote" ] || printf '     operator log (logs/operator-%s.log): %s\n' "$current" "$(sed 's/\\n/ /; s/\\"/"/g' <<<"$quote")"

  # ---- 5. a second head
  copy() { # copy NAME|'' EXTRA_JQ: the stored head as a new object
    jq --arg name "$1" '.items[0] | del(.status, .metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp,
      .metadata.managedFields, .metadata.generateName, .metadata.name)
      | if $name == "" then .metadata.generateName = "'"$cluster"'-head-" else .metadata.name = $name end | '"$2" <<<"$heads"
  }
  s5a="5a second head with generateName: 409 AlreadyExists from the API server (deterministic name)"
  out="$(copy "" '.' | kc create -f - 2>&1)"
  if grep -q 'AlreadyExists' <<<"$out" && grep -q "\"$cluster-head\" already exists" <<<"$out"; then pass "$s5a"; else fail "$s5a" "$out"; fi
  printf '     kubectl: %s\n' "$out"

  s5b="5b second head with another fixed name: refused by the head-name rule (shipped flags)"
  out="$(copy "$cluster-head-copy" '.' | kc create -f - 2>&1)"
  if grep -q 'admission webhook "validate.pods.ray-webhook.io" denied the request' <<<"$out" \
    && ! kc -n "$ns" get pod "$cluster-head-copy" >/dev/null 2>&1; then pass "$s5b"; else fail "$s5b" "$out"; fi
  printf '     kubectl: %s\n' "$(cut -c1-300 <<<"$out")"

  # A head exempt from the name rule (Autoscaler v2 on Ray < 2.48) leaves the
  # decision to the lookup, which lists the Pods with deploy/'s ServiceAccount token.
  s5c="5c second head exempt from the name rule: refused by the second-head lookup (409, real ServiceAccount token)"
  lookups_before=$(webhook_log_count 'head_lookup=yes')
  out="$(copy "$cluster-head-v2" '.spec.containers[0].image = "rayproject/ray:2.46.0"
    | .spec.containers[0].env += [{"name": "RAY_enable_autoscaler_v2", "value": "1"}]' | kc create -f - 2>&1)"
  webhook_log_grows 'head_lookup=yes' "$lookups_before"
  lookups_after=$(webhook_log_count 'head_lookup=yes')
  if grep -q 'admission webhook "validate.pods.ray-webhook.io" denied the request' <<<"$out" \
    && grep -q "$cluster-head" <<<"$out" && grep -q 'Conflict\|409' <<<"$out" \
    && [ "$lookups_after" -gt "$lookups_before" ] && ! kc -n "$ns" get pod "$cluster-head-v2" >/dev/null 2>&1; then
    pass "$s5c"
  else
    fail "$s5c" "$out (lookups logged: $lookups_before -> $lookups_after)"
  fi
  printf '     kubectl: %s\n' "$(cut -c1-300 <<<"$out")"

  # ---- 6. dry run and duplicate env warnings
  s6="6 kubectl create --dry-run=server of a Ray Pod: both webhooks called, nothing stored, duplicate env as Warning: lines"
  m0=$(webhook_log_count 'pod=dry-run-worker '); 
  out="$(kc -n "$ns" create --dry-run=server -f - 2>&1 <<EOF
apiVersion: v1
kind: Pod
metadata:
  name: dry-run-worker
  labels: {ray.io/node-type: worker, ray.io/cluster: $cluster, ray.io/group: workers}
spec:
  containers:
  - name: ray-worker
    image: rayproject/ray:2.52.0
    command: ["/bin/bash", "-c", "--"]
    args: ["ray start --address=$cluster-head-svc:6379 --block"]
    env:
    - {name: RAY_CLUSTER_NAME, value: $cluster}
    - {name: RAY_CLUSTER_NAME, value: $cluster}
EOF
)"
  rc=$?
  webhook_log_grows 'pod=dry-run-worker ' "$m0" 2
  m1=$(webhook_log_count 'pod=dry-run-worker ')
  # kube-apiserver warns on its own ("hides previous definition"); ray-webhook's
  # warning is the other Warning: line naming the variable.
  if [ $rc = 0 ] && grep -q '(server dry run)' <<<"$out" \
    && grep '^Warning: .*RAY_CLUSTER_NAME' <<<"$out" | grep -vq 'hides previous definition' \
    && [ $((m1 - m0)) -ge 2 ] && ! kc -n "$ns" get pod dry-run-worker >/dev/null 2>&1; then
    pass "$s6"
  else
    fail "$s6" "rc=$rc reviews=$((m1 - m0)) output: $out"
  fi
  grep '^Warning:' <<<"$out" | sed 's/^/     /'

  # ---- 8. the request kube-apiserver sends
  s8="8 the request kube-apiserver sends is recorded (method, path with ?timeout=, headers, TLS, ALPN)"
  rec_port=$(free_port)
  "$bin/recorder" -addr "$webhook_ip:$rec_port" -cert "$webhook_certs/tls.crt" -key "$webhook_certs/tls.key" \
    -out "$work/requests.jsonl" -max 2 -timeout 40s >"$logs/recorder.log" 2>&1 &
  pids[recorder]=$!
  wait_until 10 "recorder listening" bash -c "ss -Htln 'sport = :$rec_port' | grep -q ."
  endpoint_slice "$rec_port"
  for i in 1 2 3 4 5 6 7 8 9 10; do
    kc -n "$ns" create --dry-run=server -f - >/dev/null 2>&1 <<EOF
apiVersion: v1
kind: Pod
metadata:
  generateName: $cluster-workers-worker-
  labels: {ray.io/node-type: worker, ray.io/cluster: $cluster, ray.io/group: workers}
spec:
  containers: [{name: ray-worker, image: "rayproject/ray:2.52.0"}]
EOF
    [ -s "$work/requests.jsonl" ] && [ "$(wc -l <"$work/requests.jsonl")" -ge 2 ] && break
    sleep 0.5
  done
  endpoint_slice "$webhook_port"
  stop_pid recorder
  if [ -s "$work/requests.jsonl" ] && jq -e 'select(.method == "POST" and (.request_uri | test("\\?timeout=[0-9]+s$")))' \
    "$work/requests.jsonl" >/dev/null; then
    pass "$s8"
  else
    fail "$s8" "no request recorded (logs/recorder.log)"
  fi
  jq -c . "$work/requests.jsonl" 2>/dev/null | sed 's/^/     /'
  # Back on ray-webhook before the next scenario.
  wait_until 15 "the webhook routed to ray-webhook again" bash -c "'$bin/kubectl' --kubeconfig '$work/kubeconfig' -n $ns \
    create --dry-run=server -o name -f - <<<'{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"route-check\",\"labels\":{\"ray.io/node-type\":\"worker\",\"ray.io/cluster\":\"$cluster\"}},\"spec\":{\"containers\":[{\"name\":\"c\",\"image\":\"i\"}]}}' >/dev/null && grep -q 'pod=route-check ' '$logs/ray-webhook.log'"
else
  for s in "2 KubeRay current release" "5 second head" "6 dry run and warnings" "8 recorded request"; do
    fail "$s" "the current operator ($current) was not built or did not start (logs/operator-$current.log)"
  done
fi

# ---- 9 and 10. two replicas under load: a restart, then a certificate rotation
load_ns=e2e-load
ensure_namespace "$load_ns"
podload() { # podload SECONDS OUT: Ray worker Pods created as fast as 4 clients can
  "$bin/podload" -server "https://127.0.0.1:$apiserver_port" -ca "$pki/ca.crt" -cert "$pki/admin.crt" \
    -key "$pki/admin.key" -namespace "$load_ns" -cluster rc-load -duration "${1}s" -c 4 -max 10000 >"$2" 2>&1 &
  pids[podload]=$!
}
load_result() { # load_result OUT: "created N failed M" (and the failures to the log)
  jq -r '"created \(.created) failed \(.failed)"' "$1" 2>/dev/null || echo "no result: $(head -c 300 "$1")"
}
reviews_on() { grep -c "namespace=$load_ns " "$logs/$1.log" 2>/dev/null || true; }
probe_b=$(free_port) || die "no free port"
rw_name=ray-webhook-b rw_ip="$webhook_ip2" rw_probe="$probe_b" start_ray_webhook
endpoint_slice "$webhook_port" "$webhook_ip" "$webhook_ip2"
sleep 1

s9="9 two replicas behind the Service, one restarted (SIGTERM, started again) under a Pod-creating load: no creation fails"
a0=$(reviews_on ray-webhook); b0=$(reviews_on ray-webhook-b)
podload 20 "$work/load-restart.json"
sleep 4
# As on a node: the kubelet's SIGTERM and the endpoint controller's update race,
# and the API server's informer sees the replica gone a moment later (1 s
# here). The server's drain delay (--drain-delay in deploy/) covers that time.
kill -TERM "${pids[ray-webhook]}"
sleep 1
endpoint_slice "$webhook_port" "$webhook_ip:false" "$webhook_ip2"
stop_pid ray-webhook
start_ray_webhook
endpoint_slice "$webhook_port" "$webhook_ip" "$webhook_ip2"
kill -0 "${pids[podload]}" 2>/dev/null && covered=yes || covered=no  # the load outlasted the restart
wait "${pids[podload]}" 2>/dev/null; unset "pids[podload]"
sleep 1
a1=$(reviews_on ray-webhook); b1=$(reviews_on ray-webhook-b)
r9="$(load_result "$work/load-restart.json")"
if [[ "$r9" =~ ^created\ ([0-9]+)\ failed\ 0$ ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] && [ $((a1 - a0)) -gt 0 ] && [ $((b1 - b0)) -gt 0 ] \
  && [ "$covered" = yes ]; then
  pass "$s9"
else
  fail "$s9" "$r9; load still running after the restart: $covered; reviews on A $((a1 - a0)), on B $((b1 - b0)); $(jq -c '.failures[:3]' "$work/load-restart.json" 2>/dev/null)"
fi
printf '     %s in %s s, the load outlasting the restart: %s; reviews: replica A %s, replica B %s\n' "$r9" "$(jq -r .seconds "$work/load-restart.json" 2>/dev/null)" \
  "$covered" $((a1 - a0)) $((b1 - b0))

s10="10 the serving certificate rotated (Secret-style symlink swap, caBundle holding both CAs) under load: no creation fails"
rot="$work/rotated"
bash "$work/src/certs/generate.sh" --out "$rot" >>"$logs/generate.log" 2>&1 || die "certs/generate.sh for the rotation failed"
both="$(cat "$webhook_certs/ca.crt" "$rot/ca.crt" | base64 -w0)"
for k in mutatingwebhookconfiguration validatingwebhookconfiguration; do
  n="$(kc get "$k" ray-webhook -o json | jq '.webhooks | length')"
  ops="$(jq -nc --arg b "$both" --argjson n "$n" '[range($n) | {op: "replace", path: "/webhooks/\(.)/clientConfig/caBundle", value: $b}]')"
  kc patch "$k" ray-webhook --type=json -p "$ops" >/dev/null || die "patching the caBundle of $k failed"
done
sleep 2
podload 16 "$work/load-rotate.json"
sleep 4
secret_swap "$rot"
served() { # served IP: SHA-256 fingerprint of the certificate the replica presents
  openssl s_client -connect "$1:$webhook_port" -servername ray-webhook.ray-webhook-system.svc </dev/null 2>/dev/null \
    | openssl x509 -noout -fingerprint -sha256 2>/dev/null
}
want="$(openssl x509 -in "$rot/tls.crt" -noout -fingerprint -sha256)"
both_new() { [ "$(served "$webhook_ip")" = "$want" ] && [ "$(served "$webhook_ip2")" = "$want" ]; }
wait_until 15 "both replicas serving the new certificate" both_new
kill -0 "${pids[podload]}" 2>/dev/null && covered=yes || covered=no  # the load outlasted the rotation
wait "${pids[podload]}" 2>/dev/null; unset "pids[podload]"
r10="$(load_result "$work/load-rotate.json")"
fa="$(served "$webhook_ip")"; fb="$(served "$webhook_ip2")"
if [[ "$r10" =~ ^created\ ([0-9]+)\ failed\ 0$ ]] && [ "${BASH_REMATCH[1]}" -gt 0 ] && [ "$fa" = "$want" ] && [ "$fb" = "$want" ] \
  && [ "$covered" = yes ]; then
  pass "$s10"
else
  fail "$s10" "$r10; load still running after the swap took effect: $covered; new certificate served by A: $([ "$fa" = "$want" ] && echo yes || echo no), by B: $([ "$fb" = "$want" ] && echo yes || echo no); $(jq -c '.failures[:3]' "$work/load-rotate.json" 2>/dev/null)"
fi
printf '     %s in %s s; both replicas now present the new certificate: %s\n' "$r10" \
  "$(jq -r .seconds "$work/load-rotate.json" 2>/dev/null)" "$([ "$fa" = "$want" ] && [ "$fb" = "$want" ] && echo yes || echo no)"
stop_pid ray-webhook-b
endpoint_slice "$webhook_port"
webhook_certs_ca="$rot/ca.crt"

# ---- 7. ray-webhook stopped
s7="7 ray-webhook stopped: a Ray Pod is refused (failurePolicy Fail); a non-Ray Pod and a Ray Pod in kube-system are created"
stop_pid ray-webhook
pod_json() { # pod_json NAME RAY(yes|no)
  jq -n --arg n "$1" --arg ray "$2" '{apiVersion: "v1", kind: "Pod", metadata: {name: $n,
    labels: (if $ray == "yes" then {"ray.io/node-type": "worker", "ray.io/cluster": "rc-down"} else {app: "plain"} end)},
    spec: {containers: [{name: "c", image: "registry.k8s.io/pause:3.10"}]}}'
}
out_ray="$(pod_json down-ray-worker yes | kc -n e2e-plain create -f - 2>&1)"
out_plain="$(pod_json down-plain no | kc -n e2e-plain create -f - 2>&1)"
out_sys="$(pod_json down-system-ray-worker yes | kc -n kube-system create -f - 2>&1)"
if grep -q 'failed calling webhook' <<<"$out_ray" && ! kc -n e2e-plain get pod down-ray-worker >/dev/null 2>&1 \
  && kc -n e2e-plain get pod down-plain >/dev/null 2>&1 && kc -n kube-system get pod down-system-ray-worker >/dev/null 2>&1; then
  pass "$s7"
else
  fail "$s7" "ray: $out_ray | plain: $out_plain | kube-system: $out_sys"
fi
printf '     kubectl: %s\n' "$(cut -c1-300 <<<"$out_ray")"

if [ "$keep" = 1 ]; then
  start_ray_webhook
  cat >"$work/stop.sh" <<EOF
#!/usr/bin/env bash
# Stops what scripts/e2e.sh --keep left running.
kill ${pids[*]} 2>/dev/null
sleep 6
kill -9 ${pids[*]} 2>/dev/null
ip netns del $netns 2>/dev/null
rm -rf "$work"
EOF
  chmod +x "$work/stop.sh"
  echo "everything is still running:"
  echo "  export KUBECONFIG=$work/kubeconfig"
  echo "  kubectl: $bin/kubectl   logs: $logs/   stop: $work/stop.sh"
fi

for f in "${failures[@]}"; do log "failed: $f"; done
[ "$failed" = 0 ] || log "logs kept in $work/logs"
summary_printed=1
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
