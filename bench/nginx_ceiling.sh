#!/usr/bin/env bash
# The transport ceiling: nginx (Debian's nginx-light) answering every request
# with a fixed body, over the TLS and keep-alive settings ray-webhook serves
# with. Takes ceiling_server's flags, so bench/compare.sh starts it as it
# starts the ceiling:
#
#   bench/nginx_ceiling.sh --port P [--bind ADDR] --tls-cert FILE --tls-key FILE --body FILE [--threads N]
#   bench/nginx_ceiling.sh --smoke [--port P]
#
# One nginx process and no master (`master_process off`): compare.sh pins it
# to one CPU and reads its CPU time from the PID it started, which is this
# script's, since nginx replaces it (exec). --threads is ignored. nginx reads
# and discards each request's body before `return` answers it. Settings as
# ray-webhook's defaults: TLS 1.2 and 1.3, keep-alive for 30 s between
# requests (--idle-timeout) and up to 100,000 requests per connection (as
# ceiling_server), bodies up to 7 MiB, no compression, no access log.
#
# --smoke (for CTest, so that a broken config fails instead of leaving a blank row in compare.sh):
# starts itself on --port (18790) with a throw-away certificate and body; exits 1 unless two POSTs on one connection get 200 and the body.
set -euo pipefail
bind=127.0.0.1 port="" cert="" key="" body=""
smoke=false
while [ $# -gt 0 ]; do
  case "$1" in
    --bind) bind="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --tls-cert) cert="$2"; shift 2 ;;
    --tls-key) key="$2"; shift 2 ;;
    --body) body="$2"; shift 2 ;;
    --threads) shift 2 ;;
    --smoke) smoke=true; shift ;;
    *) echo "nginx_ceiling.sh: unknown flag $1" >&2; exit 2 ;;
  esac
done
if $smoke; then
  root="$(cd "$(dirname "$0")/.." && pwd)"
  tmp="$(mktemp -d -t ray-webhook-nginx-smoke.XXXXXX)"
  pid=""
  trap '[ -z "$pid" ] || { kill -TERM "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; }; rm -rf "$tmp"' EXIT
  bash "$root/certs/generate.sh" --out "$tmp/certs" >/dev/null 2>&1 ||
    { echo "nginx_ceiling.sh: smoke: FAIL: certs/generate.sh failed" >&2; exit 1; }
  printf '%s' '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":"smoke","allowed":true}}' \
    >"$tmp/body.json"
  bash "$0" --port "${port:-18790}" --bind "$bind" --tls-cert "$tmp/certs/tls.crt" --tls-key "$tmp/certs/tls.key" \
    --body "$tmp/body.json" --threads 1 >"$tmp/nginx.log" 2>&1 &
  pid=$!
  url="https://$bind:${port:-18790}/mutate"
  for _ in $(seq 50); do
    curl -sk -o /dev/null "$url" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  fixture="$root/bench/fixtures/worker.json"
  # Two POSTs on one connection (curl reuses it): keep-alive and reading the body work.
  out="$(curl -sk -H 'Content-Type: application/json' --data-binary @"$fixture" -w '\n%{http_code} %{num_connects}\n' "$url" \
    --next -sk -H 'Content-Type: application/json' --data-binary @"$fixture" -w '\n%{http_code} %{num_connects}\n' "$url" \
    2>&1 || true)"
  want="$(cat "$tmp/body.json")"
  expect="$(printf '%s\n200 1\n%s\n200 0' "$want" "$want")"
  if [ "$out" != "$expect" ]; then
    echo "nginx_ceiling.sh: smoke: FAIL: want two answers 200 with the body on one connection, got:" >&2
    head -c 600 <<<"$out" >&2; echo >&2
    tail -5 "$tmp/nginx.log" >&2
    exit 1
  fi
  echo "nginx_ceiling.sh: smoke: ok (2 answers of $(wc -c <"$tmp/body.json") bytes, one connection)" >&2
  exit 0
fi
[ -n "$port" ] && [ -s "$cert" ] && [ -s "$key" ] && [ -s "$body" ] ||
  { echo "nginx_ceiling.sh: --port, --tls-cert, --tls-key and --body are required" >&2; exit 2; }
nginx=/usr/sbin/nginx
[ -x "$nginx" ] || { echo "nginx_ceiling.sh: $nginx is missing (apt-get install nginx-light)" >&2; exit 2; }
# `return` takes the body as a string; an answer with a quote or backslash would need escaping.
grep -q "['\\\\]" "$body" && { echo "nginx_ceiling.sh: the body holds ' or \\, which this config does not escape" >&2; exit 2; }

# Beside the body, so the caller that made the body also removes the rest.
dir="$(cd "$(dirname "$body")" && pwd)/nginx-$port"
mkdir -p "$dir"
cat >"$dir/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  client_max_body_size 7m;
  client_body_buffer_size 256k;
  keepalive_timeout 30s;
  keepalive_requests 100000;
  tcp_nodelay on;
  gzip off;
  server {
    listen $bind:$port ssl;
    ssl_certificate $cert;
    ssl_certificate_key $key;
    ssl_protocols TLSv1.2 TLSv1.3;
    location / {
      default_type application/json;
      return 200 '$(cat "$body")';
    }
  }
}
CONF
exec "$nginx" -p "$dir" -c "$dir/nginx.conf"
