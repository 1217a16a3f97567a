#!/usr/bin/env bash
# Replay: starts the real ray-webhook server with a throw-away certificate and
# sends every AdmissionReview fixture with `curl --cacert`. For each answer it
# checks the envelope (same apiVersion and kind, uid echoed, JSON content
# type), the decision, and, when there is a patch, the Pod that results from
# applying it; then it sends that Pod again and expects no patch. It also sends
# bodies that are not AdmissionReviews and checks the server keeps serving.
#
# With a mock of kube-apiserver's pods list it then checks the second-head
# lookup end to end: live, terminating and failed heads, API errors, a token
# the API refuses, and an API that hangs past the timeout.
#
#   run.sh --server BIN --patch-tool BIN --fixtures DIR --certs GENERATE_SH --mock-kube-api BIN
set -uo pipefail
# shellcheck source=../support/mock_kube_api.sh
source "$(dirname "$0")/../support/mock_kube_api.sh"

while [ $# -gt 0 ]; do
  case "$1" in
    --server) server="$2"; shift 2 ;;
    --patch-tool) patch_tool="$2"; shift 2 ;;
    --fixtures) fixtures="$2"; shift 2 ;;
    --certs) certs="$2"; shift 2 ;;
    --mock-kube-api) mock="$2"; shift 2 ;;
    *) echo "run.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
for tool in curl jq openssl; do
  command -v "$tool" >/dev/null || { echo "replay: $tool is required" >&2; exit 2; }
done

work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
check() {  # check DESCRIPTION COMMAND...
  local what="$1"; shift
  if "$@"; then pass; else fail "$what"; fi
}

# logged PATTERN FILE: the server's log has a line matching PATTERN within 3 s
# (info lines are written in batches, at least once a second).
logged() {
  local i
  for i in $(seq 30); do
    grep -q -- "$1" "$2" && return 0
    sleep 0.1
  done
  return 1
}

bash "$certs" --out "$work/certs" 2>/dev/null || { echo "replay: certificate generation failed" >&2; exit 1; }

# start_server LOG [FLAGS...]: starts ray-webhook on a free port; sets $port and $server_pid.
start_server() {
  local log="$1"; shift
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    port=$((20000 + RANDOM % 20000))
    "$server" serve --bind 127.0.0.1 --port "$port" --probe-port 0 --tls-cert "$work/certs/tls.crt" \
      --tls-key "$work/certs/tls.key" --log-level info --drain-delay 0s "$@" >"$log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 50); do
      if curl -sf --cacert "$work/certs/ca.crt" "https://127.0.0.1:$port/healthz" >/dev/null 2>&1; then
        pids+=("$server_pid")
        return 0
      fi
      kill -0 "$server_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill "$server_pid" 2>/dev/null; wait "$server_pid" 2>/dev/null
  done
  echo "replay: the server did not start" >&2
  cat "$log" >&2
  exit 1
}

start_server "$work/server.log"
base="https://127.0.0.1:$port"

# post ENDPOINT FILE -> writes $work/resp, echoes "HTTP_CODE CONTENT_TYPE"
post() {
  curl -s --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' --data-binary "@$2" \
    -o "$work/resp" -w '%{http_code} %{content_type}' "$base$1"
}

replay_case() {
  local name="$1" endpoint="$2" review="$fixtures/reviews/$1.json" expect="$fixtures/expected/$1.json"
  local want; want=$(jq -c ".$endpoint" "$expect")
  local status; status=$(post "/$endpoint" "$review")
  local tag="$name /$endpoint"
  check "$tag: HTTP 200 application/json (got $status)" [ "${status%% *}" = 200 ] && [[ "${status#* }" == application/json* ]]
  local r="$work/resp"
  check "$tag: apiVersion echoed" [ "$(jq -r .apiVersion "$r")" = "$(jq -r .apiVersion "$review")" ]
  check "$tag: kind AdmissionReview" [ "$(jq -r .kind "$r")" = AdmissionReview ]
  check "$tag: uid echoed" [ "$(jq -r .response.uid "$r")" = "$(jq -r .request.uid "$review")" ]
  check "$tag: allowed" [ "$(jq -r .response.allowed "$r")" = "$(jq -r .allowed <<<"$want")" ]
  if [ "$(jq -r .allowed <<<"$want")" = false ]; then
    check "$tag: status.code" [ "$(jq -r .response.status.code "$r")" = "$(jq -r .code <<<"$want")" ]
    while IFS= read -r fragment; do
      check "$tag: message contains $fragment" jq -e --arg f "$fragment" '.response.status.message | contains($f)' "$r" >/dev/null
    done < <(jq -r '.message_contains[]' <<<"$want")
  fi
  if jq -e 'has("warnings_contain")' <<<"$want" >/dev/null; then
    while IFS= read -r fragment; do
      check "$tag: a warning contains $fragment" jq -e --arg f "$fragment" '[.response.warnings[]? | contains($f)] | any' "$r" >/dev/null
    done < <(jq -r '.warnings_contain[]' <<<"$want")
  else
    check "$tag: no warnings" jq -e '.response | has("warnings") | not' "$r" >/dev/null
  fi

  local pod; pod=$(jq -r .pod <<<"$want")
  if [ "$pod" = null ]; then
    check "$tag: no patch and no patchType" jq -e '.response | (has("patch") or has("patchType")) | not' "$r" >/dev/null
    return
  fi
  check "$tag: patchType JSONPatch" [ "$(jq -r .response.patchType "$r")" = JSONPatch ]
  jq -r .response.patch "$r" >"$work/patch.b64"
  jq .request.object "$review" >"$work/object.json"
  if ! "$patch_tool" "$work/object.json" "$work/patch.b64" >"$work/patched.json"; then
    fail "$tag: the patch does not apply"
    return
  fi
  check "$tag: patched Pod equals $pod" [ "$(jq -S . "$work/patched.json")" = "$(jq -S . "$fixtures/expected/$pod")" ]
  # Reinvocation (IfNeeded): the patched Pod needs nothing more.
  jq --slurpfile obj "$work/patched.json" '.request.object = $obj[0] | .request.uid = "reinvoked-\(.request.uid)"' \
    "$review" >"$work/again.json"
  status=$(post "/$endpoint" "$work/again.json")
  check "$tag: re-sent patched Pod is allowed with no patch" \
    jq -e '.response.allowed == true and (.response | has("patch") | not)' "$work/resp" >/dev/null
}

cases=0
for review in "$fixtures"/reviews/*.json; do
  name=$(basename "$review" .json)
  replay_case "$name" mutate
  replay_case "$name" validate
  cases=$((cases + 1))
done
[ "$cases" -gt 0 ] || fail "no fixtures found in $fixtures/reviews"

# The headline case, spelled out: a KubeRay 0.4 worker gets FQ_RAY_IP, RAY_IP and an FQDN --address.
post /mutate "$fixtures/reviews/kuberay-0.4-worker.json" >/dev/null
jq -r .response.patch "$work/resp" >"$work/patch.b64"
jq .request.object "$fixtures/reviews/kuberay-0.4-worker.json" >"$work/object.json"
"$patch_tool" "$work/object.json" "$work/patch.b64" >"$work/patched.json" 2>/dev/null
check "0.4 worker: FQ_RAY_IP" jq -e '.spec.containers[0].env | map(select(.name=="FQ_RAY_IP"))[0].value == "raycluster-kuberay-head-svc.default.svc.cluster.local"' "$work/patched.json" >/dev/null
check "0.4 worker: RAY_IP" jq -e '.spec.containers[0].env | map(select(.name=="RAY_IP"))[0].value == "raycluster-kuberay-head-svc"' "$work/patched.json" >/dev/null
check "0.4 worker: FQDN --address" jq -e '.spec.containers[0].args[0] | contains("--address=raycluster-kuberay-head-svc.default.svc.cluster.local:6379")' "$work/patched.json" >/dev/null

# Bodies that are not AdmissionReviews: 400 with a Status body, and the server keeps serving.
bad="$fixtures/bad-requests"
while IFS=$'\t' read -r file fragment; do
  for endpoint in mutate validate; do
    status=$(post "/$endpoint" "$bad/$file")
    check "bad $file /$endpoint: HTTP 400 (got $status)" [ "${status%% *}" = 400 ]
    check "bad $file /$endpoint: Status message has '$fragment'" \
      jq -e --arg f "$fragment" '.kind == "Status" and .code == 400 and (.message | contains($f))' "$work/resp" >/dev/null
  done
done < <(jq -r '.cases | to_entries[] | "\(.key)\t\(.value)"' "$bad/expected.json")

code_of() { curl -s --cacert "$work/certs/ca.crt" -o "$work/resp" -w '%{http_code}' "$@"; }
check "GET /mutate is 405" [ "$(code_of "$base/mutate")" = 405 ]
check "405 names the allowed method" [ "$(curl -s --cacert "$work/certs/ca.crt" -o /dev/null -D - "$base/validate" | tr -d '\r' | grep -i '^allow:' | cut -d' ' -f2-)" = POST ]
check "PUT /validate is 405" [ "$(code_of -X PUT -d '{}' "$base/validate")" = 405 ]
check "POST /healthz is 405" [ "$(code_of -d '' "$base/healthz")" = 405 ]
check "unknown path is 404 with a Status body" [ "$(code_of "$base/nope")" = 404 ] && jq -e '.code == 404' "$work/resp" >/dev/null
check "GET /readyz is 200" [ "$(code_of "$base/readyz")" = 200 ]
check "GET /healthz is 200" [ "$(code_of "$base/healthz")" = 200 ]
# A client that drops the connection mid-body must not hurt the next one.
printf 'POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{"apiV' |
  timeout 5 openssl s_client -quiet -connect "127.0.0.1:$port" -CAfile "$work/certs/ca.crt" >/dev/null 2>&1
check "a good review still succeeds after the bad inputs" [ "$(post /mutate "$fixtures/reviews/kuberay-0.4-worker.json" | cut -d' ' -f1)" = 200 ]
check "the server process is still running" kill -0 "${pids[0]}"
# Several requests on one keep-alive connection (curl reuses it for each URL).
urls=()
for _ in 1 2 3 4 5 6; do urls+=("$base/mutate" -o /dev/null); done
n=$(curl -s --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' \
  --data-binary "@$fixtures/reviews/kuberay-0.4-worker.json" -w '%{http_code} %{num_connects}\n' "${urls[@]}" |
  awk '$1 == 200 {ok++; c += $2} END {print ok, c}')
check "six keep-alive requests succeed on one connection (got: ok connects = $n)" [ "$n" = "6 1" ]
# cpp-httplib's own listen backlog is 5; the server raises it (ss shows it as Send-Q).
backlog=$(ss -Hltn "sport = :$port" | awk '{print $3}' | head -n1)
check "the listen backlog is raised above cpp-httplib's 5 (got ${backlog:-none})" [ "${backlog:-0}" -ge 128 ]
timeout 10 "$server" serve --bind 127.0.0.1 --port "$port" --probe-port 0 --tls-cert "$work/certs/tls.crt" --tls-key "$work/certs/tls.key" \
  >/dev/null 2>"$work/err"
check "a second server on a busy port fails instead of sharing it (no SO_REUSEPORT)" [ $? -eq 1 ]
check "the server logged one line per review" logged 'review path=/mutate uid=' "$work/server.log"
check "logs never carry env values" bash -c "! grep -q 'raycluster-kuberay-head-svc:6379' '$work/server.log'"
# A uid that tries to forge a field is quoted in the log line, not taken as fields.
jq -c '.request.uid = "x decision=deny"' "$fixtures/reviews/kuberay-0.4-worker.json" >"$work/forged-uid.json"
curl -s -o /dev/null --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' \
  --data-binary "@$work/forged-uid.json" "$base/mutate"
check "a uid with spaces and '=' is logged quoted" logged 'uid="x decision=deny" namespace=' "$work/server.log"

# The second-head lookup, end to end, against mock-kube-api.
token=mock-token-0123456789abcdef
printf '%s' "$token" >"$work/token"
printf 'not-the-token' >"$work/bad-token"
start_mock_kube_api "$mock" "$work" "$token" --pods "$fixtures/kube-api/pods.json" || { echo "replay: mock-kube-api did not start" >&2; exit 1; }
api=(--kube-api-server "https://127.0.0.1:$api_port" --kube-ca-file "$work/certs/ca.crt" --kube-api-timeout 500ms)

# head_review CLUSTER OUT: a head Pod named deterministically, of RayCluster CLUSTER.
head_review() {
  jq --arg c "$1" '.request.uid = "lookup-\($c)" | .request.name = "\($c)-head"
    | .request.object.metadata.name = "\($c)-head" | .request.object.metadata.labels["ray.io/cluster"] = $c' \
    "$fixtures/reviews/head-already-named.json" >"$2"
}
# validate_head CLUSTER -> response in $work/resp, HTTP status echoed
validate_head() { head_review "$1" "$work/head-$1.json"; post /validate "$work/head-$1.json" | cut -d' ' -f1; }

start_server "$work/lookup.log" "${api[@]}" --kube-token-file "$work/token"
base="https://127.0.0.1:$port"
check "lookup: no head is allowed" [ "$(validate_head no-head)" = 200 ] && jq -e '.response.allowed and (.response | has("warnings") | not)' "$work/resp" >/dev/null
check "lookup: the API saw the path, selector and token" \
  grep -qx 'GET /api/v1/namespaces/default/pods selector=ray.io/cluster=no-head,ray.io/node-type=head auth=ok' "$work/api.log"
validate_head live-head >/dev/null
check "lookup: a live head denies the second with 409" jq -e '.response.allowed == false and .response.status.code == 409' "$work/resp" >/dev/null
check "lookup: the denial names the live head and its phase" \
  jq -e '.response.status.message | contains("\"live-head-head-x7k2p\" (phase Running)")' "$work/resp" >/dev/null
validate_head pending-head >/dev/null
check "lookup: a pending head counts as live" jq -e '.response.allowed == false' "$work/resp" >/dev/null
# A head already named deterministically is this Pod's own name: the API server refuses that duplicate itself.
validate_head self-named >/dev/null
check "lookup: a listed Pod with this Pod's own name is not a second head" jq -e '.response.allowed == true' "$work/resp" >/dev/null
for c in terminating-head failed-head succeeded-head; do
  validate_head "$c" >/dev/null
  check "lookup: $c does not block a new head" jq -e '.response.allowed == true' "$work/resp" >/dev/null
done
validate_head mixed >/dev/null
check "lookup: mixed heads, the live one is named" jq -e '.response.status.message | contains("mixed-head-live1")' "$work/resp" >/dev/null
validate_head forbidden >/dev/null
check "lookup: API 403 allows with a warning" \
  jq -e '.response.allowed and ([.response.warnings[] | contains("could not check")] | any)' "$work/resp" >/dev/null
validate_head broken >/dev/null
check "lookup: API 500 allows with a warning" jq -e '.response.allowed and (.response.warnings | length == 1)' "$work/resp" >/dev/null
start_ms=$(date +%s%3N)
validate_head slow >/dev/null
elapsed=$(( $(date +%s%3N) - start_ms ))
check "lookup: a hanging API is cut off by the timeout (answered in ${elapsed} ms)" [ "$elapsed" -lt 3000 ]
check "lookup: a hanging API allows with a warning" jq -e '.response.allowed and (.response.warnings | length == 1)' "$work/resp" >/dev/null
check "lookup: workers never trigger a lookup" [ "$(post /validate "$fixtures/reviews/kuberay-1.7-worker.json" | cut -d' ' -f1)" = 200 ]
check "lookup: the API saw no worker lookups" bash -c "! grep -q 'raycluster-sample' '$work/api.log'"
check "lookup: the server logged the lookup" logged 'head_lookup=yes' "$work/lookup.log"

start_server "$work/lookup-deny.log" "${api[@]}" --kube-token-file "$work/token" --head-lookup-failure deny
base="https://127.0.0.1:$port"
validate_head forbidden >/dev/null
check "lookup failure=deny: API 403 denies with 503" jq -e '.response.allowed == false and .response.status.code == 503' "$work/resp" >/dev/null
validate_head no-head >/dev/null
check "lookup failure=deny: a working lookup still allows" jq -e '.response.allowed == true' "$work/resp" >/dev/null

start_server "$work/lookup-badtoken.log" "${api[@]}" --kube-token-file "$work/bad-token"
base="https://127.0.0.1:$port"
validate_head live-head >/dev/null
check "lookup: a refused token (401) allows with a warning that says 401" \
  jq -e '.response.allowed and ([.response.warnings[] | contains("401")] | any)' "$work/resp" >/dev/null
printf '%s' "$token" >"$work/bad-token"
touch -d '+2 seconds' "$work/bad-token"
validate_head live-head >/dev/null
check "lookup: a rotated token file is read again" jq -e '.response.allowed == false' "$work/resp" >/dev/null

start_server "$work/lookup-warn.log" "${api[@]}" --kube-token-file "$work/token" --second-head-mode warn
base="https://127.0.0.1:$port"
validate_head live-head >/dev/null
check "second-head-mode=warn: allowed with a warning" \
  jq -e '.response.allowed and ([.response.warnings[] | startswith("second-head (warn mode)")] | any)' "$work/resp" >/dev/null

start_server "$work/no-api.log"
base="https://127.0.0.1:$port"
check "no API configured: the server says lookup is inactive" logged 'second-head lookup inactive' "$work/no-api.log"

# The command line around the server.
"$server" serve --tls-cert x --tls-key y --port 0 >/dev/null 2>"$work/err"
check "a bad flag exits 2" [ $? -eq 2 ]
check "a bad flag says what is wrong" grep -q -- "--port must be a number" "$work/err"
"$server" --version >"$work/out"
check "--version prints the version" grep -Eq '^ray-webhook [0-9]+\.[0-9]+\.[0-9]+$' "$work/out"
# Into a file, not a pipe: grep -q would stop reading at the first match, and a
# usage text longer than one write then ends the server with SIGPIPE.
"$server" --help >"$work/help"
check "--help lists the flags" grep -q -- "--tls-cert" "$work/help"
timeout 10 "$server" serve --bind 127.0.0.1 --port "$port" --probe-port 0 --tls-cert "$work/missing.crt" --tls-key "$work/missing.key" \
  >/dev/null 2>"$work/err"
check "an unloadable certificate exits 1" [ $? -eq 1 ]
check "an unloadable certificate is named" grep -q "missing.crt" "$work/err"
"$server" review --mutate "$fixtures/reviews/kuberay-0.4-worker.json" >"$work/offline.json"
post /mutate "$fixtures/reviews/kuberay-0.4-worker.json" >/dev/null
check "review --mutate answers as the server does" [ "$(jq -S . "$work/offline.json")" = "$(jq -S . "$work/resp")" ]
"$server" review --validate - <"$fixtures/reviews/dupmount-worker.json" >"$work/offline.json"
check "review --validate reads stdin" jq -e '.response.allowed == false' "$work/offline.json" >/dev/null
"$server" review --mutate "$fixtures/bad-requests/not-json.body" >/dev/null 2>&1
check "review of a bad body exits 1" [ $? -eq 1 ]
CLUSTER_DOMAIN=corp.example "$server" review --mutate "$fixtures/reviews/kuberay-0.4-worker.json" |
  jq -r .response.patch | base64 -d >"$work/patch.json"
check "review honours CLUSTER_DOMAIN" grep -q "raycluster-kuberay-head-svc.default.svc.corp.example" "$work/patch.json"

# Every server exits 0 on SIGTERM (under the sanitizers, a leak or error would change that).
for pid in "${pids[@]}"; do
  kill -TERM "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  [ "$pid" = "${mock_pid:-}" ] && continue
  check "server $pid exits 0 on SIGTERM (got $rc)" [ "$rc" -eq 0 ]
done
pids=()

echo "replay: $cases fixtures replayed against the real server"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
