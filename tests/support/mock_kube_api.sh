# start_mock_kube_api MOCK WORK TOKEN [ARG...]: starts tests/tools/mock-kube-api
# on a random free port with WORK/certs' pair and the bearer token TOKEN, its
# requests logged to WORK/api.log and the other ARGs passed on (--pods or
# --objects). Tries up to ten ports; sets api_port and mock_pid and appends the
# pid to the caller's pids array. Returns 1 when it never listened.
start_mock_kube_api() {
  local mock="$1" work="$2" token="$3"
  shift 3
  mock_pid=""
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    api_port=$((40000 + RANDOM % 20000))
    "$mock" --port "$api_port" --tls-cert "$work/certs/tls.crt" --tls-key "$work/certs/tls.key" --token "$token" \
      "$@" --log "$work/api.log" >"$work/mock.out" 2>&1 &
    mock_pid=$!
    for _ in $(seq 1 50); do
      grep -q listening "$work/mock.out" 2>/dev/null && break
      kill -0 "$mock_pid" 2>/dev/null || break
      sleep 0.1
    done
    if grep -q listening "$work/mock.out"; then
      pids+=("$mock_pid")
      return 0
    fi
    wait "$mock_pid" 2>/dev/null
    mock_pid=""
  done
  return 1
}
