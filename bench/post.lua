-- wrk script for bench/load.sh: POSTs one AdmissionReview over keep-alive and,
-- at the end, prints one machine-readable line that load.sh turns into its table.
--
--   wrk -t1 -c64 -d10s -s bench/post.lua https://127.0.0.1:8443/mutate -- FILE [kube-apiserver|wrk]
--
-- kube-apiserver (the default) sends the request as kube-apiserver's webhook
-- client does: ?timeout= on the path, and Go's transport headers, among them
-- Accept-Encoding: gzip (tests/e2e records the real request); wrk sends only
-- wrk's own headers and the Content-Type.
--
-- The request is built once per thread (wrk.format in wrk.init) and sent again
-- on every response, so wrk does no per-request Lua work. wrk keeps its
-- connections alive (HTTP/1.1) and does not verify the server's certificate.

local body_file

function init(args)
  body_file = args[1]
  if not body_file then
    error("post.lua: pass the body file after --, e.g. wrk ... URL -- worker.json")
  end
  local f = assert(io.open(body_file, "rb"))
  wrk.body = f:read("*a")
  f:close()
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  local headers = args[2] or "kube-apiserver"
  if headers == "kube-apiserver" then
    wrk.path = wrk.path .. "?timeout=5s"
    wrk.headers["User-Agent"] = "kube-apiserver-admission"
    wrk.headers["Accept"] = "application/json, */*"
    wrk.headers["Accept-Encoding"] = "gzip"
  elseif headers ~= "wrk" then
    error("post.lua: the header set is kube-apiserver or wrk, not " .. headers)
  end
end

-- requests/s, latency percentiles in microseconds, and every kind of error;
-- status counts answers that were not 2xx or 3xx.
function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    "RESULT requests=%d seconds=%.3f rps=%.1f p50_us=%d p90_us=%d p99_us=%d max_us=%d " ..
    "connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
