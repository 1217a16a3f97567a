#!/usr/bin/env bash
# The rendered Deployment's container, run the way the kubelet would run it, on
# loopback only:
#   tests/deploy/container.sh --server build/ray-webhook --fixtures tests/fixtures
# - command line: the Dockerfile's ENTRYPOINT + the Deployment's args and env,
#   with only --cert-dir pointed at a temp copy of the mounted Secret, --port at
#   a free port and --bind at 127.0.0.1;
# - the Secret's files as the kubelet writes them (group fsGroup, defaultMode),
#   read by the server as runAsUser:runAsGroup (when this runs as root);
# - curl as kube-apiserver calls it: SNI and hostname <svc>.<ns>.svc, trusting
#   only the webhook configuration's caBundle; the probes' paths; every
#   webhook's path with an AdmissionReview;
# - SIGTERM: /readyz turns 503 during --drain-delay and the process exits
#   within terminationGracePeriodSeconds;
# - every kustomization's args and env (examples included) pass the server's
#   own flag parser.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"

server=""
fixtures="$repo/tests/fixtures"
while [ $# -gt 0 ]; do
  case "$1" in
    --server) server="$2"; shift 2 ;;
    --fixtures) fixtures="$2"; shift 2 ;;
    *) echo "container.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$server" ] || { fail "--server $server is not an executable ray-webhook"; finish; }
for tool in curl jq openssl; do need "$tool" "install $tool"; done
need node "install nodejs and npm"
deploy_node_modules || { fail "npm ci in tests/deploy failed"; finish; }

work="$(mktemp -d)"
chmod 755 "$work"
pid=""
# shellcheck disable=SC2317  # called by the trap
cleanup() {
  [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
render_all_or_finish "$work"
node "$deploy_tests/yaml2json.mjs" "$work/rendered/overlays_static-certs.yaml" >"$work/objects.json"
q() { jq -r "$@" "$work/objects.json"; }

deployment='.[] | select(.kind == "Deployment")'
pod="$deployment | .spec.template.spec"
container="$pod | .containers[0]"
mapfile -t entrypoint < <(sed -n 's/^ENTRYPOINT[[:space:]]*//p' "$repo/Dockerfile" | tail -n1 | jq -r '.[]')
mapfile -t args < <(q "$container | .args // [] | .[]")
cert_dir=""
for ((i = 0; i < ${#entrypoint[@]}; i++)); do
  [ "${entrypoint[$i]}" = --cert-dir ] && cert_dir="${entrypoint[$((i + 1))]}"
done
mount_name="$(q --arg d "$cert_dir" "$container | .volumeMounts[] | select(.mountPath == \$d) | .name")"
secret_name="$(q --arg v "$mount_name" "$pod | .volumes[] | select(.name == \$v) | .secret.secretName")"
default_mode="$(q --arg v "$mount_name" "$pod | .volumes[] | select(.name == \$v) | .secret.defaultMode // 420")"
uid="$(q "$container | .securityContext.runAsUser // empty")"; [ -n "$uid" ] || uid="$(q "$pod | .securityContext.runAsUser")"
gid="$(q "$container | .securityContext.runAsGroup // empty")"; [ -n "$gid" ] || gid="$(q "$pod | .securityContext.runAsGroup")"
fs_group="$(q "$pod | .securityContext.fsGroup // empty")"
grace="$(q "$pod | .terminationGracePeriodSeconds // 30")"
ready_path="$(q "$container | .readinessProbe.httpGet.path")"
live_path="$(q "$container | .livenessProbe.httpGet.path")"
host="$(q '[.[] | select(.kind == "MutatingWebhookConfiguration") | .webhooks[0].clientConfig.service] | .[0] | "\(.name).\(.namespace).svc"')"
q '.[] | select(.kind == "MutatingWebhookConfiguration") | .webhooks[0].clientConfig.caBundle' | base64 -d >"$work/cabundle.pem"
echo "# entrypoint: ${entrypoint[*]}; args: ${args[*]}; mount: $cert_dir <- Secret $secret_name (mode $default_mode); user $uid:$gid fsGroup ${fs_group:-none}"

# The mounted Secret, as the kubelet lays it out.
mount="$work/mount"
mkdir -p "$mount"
for key in tls.crt tls.key ca.crt; do
  # shellcheck disable=SC2016  # jq variables
  q --arg s "$secret_name" --arg k "$key" '.[] | select(.kind == "Secret" and .metadata.name == $s) | .data[$k] // empty' \
    | base64 -d >"$mount/$key"
done
chmod "$(printf '%o' "$default_mode")" "$mount"/*
run_as=()
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -n "$uid" ]; then
  [ -n "$fs_group" ] && chgrp "$fs_group" "$mount"/*
  run_as=(setpriv --reuid="$uid" --regid="${gid:-$uid}" --clear-groups)
  [ -n "$fs_group" ] && run_as=(setpriv --reuid="$uid" --regid="${gid:-$uid}" --groups="$fs_group")
  echo "# running as $uid:${gid:-$uid} (supplementary group ${fs_group:-none}), key mode $(stat -c '%a %U:%G' "$mount/tls.key")"
fi

# The command line: only --cert-dir, --port and --bind differ from the Pod's.
command=("$server")
for ((i = 1; i < ${#entrypoint[@]}; i++)); do
  if [ "${entrypoint[$((i - 1))]}" = --cert-dir ]; then command+=("$mount"); else command+=("${entrypoint[$i]}"); fi
done
port_in_pod=""
for a in "${args[@]}"; do
  case "$a" in
    --port=*) port_in_pod="${a#--port=}" ;;
    --probe-port=*) ;;
    --bind=*) ;;
    *) command+=("$a") ;;
  esac
done
container_port="$(q "$container | .ports[0].containerPort")"
if [ "${port_in_pod:-8443}" = "$container_port" ]; then
  pass "--port ${port_in_pod:-8443} (default 8443) is the containerPort"
else
  fail "--port ${port_in_pod:-8443} is not the containerPort $container_port"
fi
env_args=()
while IFS=$'\t' read -r name value; do env_args+=("$name=$value"); done \
  < <(q "$container | .env // [] | .[] | select(.value != null) | [.name, .value] | @tsv")

start_server() {
  for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 20000))
    probe_port=$((port + 1))
    env -i PATH="$PATH" "${env_args[@]}" "${run_as[@]}" "${command[@]}" --port="$port" --probe-port="$probe_port" \
      --bind=127.0.0.1 \
      >"$work/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do
      kill -0 "$pid" 2>/dev/null || break
      [ "$(probe_of "$ready_path")" = 200 ] && return 0
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    pid=""
    grep -qi 'address already in use\|bind' "$work/server.log" || return 1
  done
  return 1
}
# curl the way kube-apiserver calls the Service: SNI and SAN <svc>.<ns>.svc,
# trusting the caBundle and nothing else.
status_of() {
  curl -s -o "$work/body" -w '%{http_code}' --max-time 5 --cacert "$work/cabundle.pem" --capath /nonexistent \
    --resolve "$host:$port:127.0.0.1" "https://$host:$port$1" "${@:2}"
}

# The kubelet's probes: plain HTTP on the probe port, no certificate.
probe_of() {
  curl -s -o "$work/body" -w '%{http_code}' --max-time 5 "http://127.0.0.1:$probe_port$1"
}

echo "# ${env_args[*]} ${run_as[*]} ${command[*]} --port=PORT --probe-port=PORT+1 --bind=127.0.0.1"
if start_server; then
  pass "the server starts with the Pod's command line and answers $ready_path, trusted through the caBundle for $host"
else
  fail "the server did not become ready: $(tail -5 "$work/server.log")"
  finish
fi
code="$(probe_of "$live_path")"
if [ "$code" = 200 ]; then pass "liveness probe $live_path answers 200 on the probe port"; else fail "liveness probe $live_path answered $code"; fi
if curl -s -o /dev/null --max-time 5 --cacert "$work/cabundle.pem" --resolve "other.example.svc:$port:127.0.0.1" \
  "https://other.example.svc:$port$ready_path"; then
  fail "the serving certificate is also accepted for another name"
else
  pass "the serving certificate is refused for a name that is not the Service's"
fi

review="$fixtures/reviews/kuberay-0.4-worker.json"
uid_sent="$(jq -r .request.uid "$review")"
mapfile -t paths < <(q '.[] | select(.kind | test("WebhookConfiguration$")) | .webhooks[].clientConfig.service.path' | sort -u)
for path in "${paths[@]}"; do
  code="$(status_of "$path" -H 'Content-Type: application/json' --data-binary "@$review")"
  if [ "$code" = 200 ] && [ "$(jq -r .response.uid "$work/body" 2>/dev/null)" = "$uid_sent" ]; then
    pass "webhook path $path answers an AdmissionReview ($(jq -c '{allowed: .response.allowed, patch: (.response.patch != null)}' "$work/body"))"
  else
    fail "webhook path $path answered $code: $(head -c 300 "$work/body")"
  fi
done
code="$(status_of /metrics)"
if [ "$code" = 200 ]; then pass "/metrics answers 200"; else fail "/metrics answered $code"; fi

# SIGTERM: readiness fails first, then the process ends within the grace period.
start=$(date +%s%N)
kill -TERM "$pid"
went_unready=""
for _ in $(seq 1 40); do
  code="$(probe_of "$ready_path")"
  if [ "$code" = 503 ]; then went_unready=yes; break; fi
  sleep 0.05
done
if [ -n "$went_unready" ]; then
  pass "after SIGTERM $ready_path answers 503 (endpoints drop the Pod)"
else
  fail "after SIGTERM $ready_path answered $code, not 503"
fi
exited=""
for _ in $(seq 1 $((grace * 10))); do
  if ! kill -0 "$pid" 2>/dev/null; then exited=yes; break; fi
  sleep 0.1
done
wait "$pid" 2>/dev/null
rc=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
pid=""
if [ -n "$exited" ]; then
  pass "after SIGTERM the server exited (status $rc) in ${elapsed_ms}ms, within terminationGracePeriodSeconds ${grace}s"
else
  fail "the server was still running ${grace}s after SIGTERM"
fi
[ "$failed" -eq 0 ] || { echo "# server log:"; tail -20 "$work/server.log"; }

# Every kustomization's container arguments and environment (warn-mode,
# cluster-domain, ...) pass the server's own flag parser: it exits 2 on a bad
# flag or value, and here reaches the certificate (absent on purpose, exit 1).
for rendered in "$work"/rendered/*.yaml; do
  name="$(basename "$rendered" .yaml)"
  node "$deploy_tests/yaml2json.mjs" "$rendered" >"$work/one.json"
  if why="$(image_command_parses "$server" "$work/one.json" "$work/absent")"; then
    pass "$name: the server accepts the container's flags and environment"
  else
    fail "$name: the server refused the container's command line ($why)"
  fi
done
finish
