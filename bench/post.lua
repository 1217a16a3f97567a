-- wrk script for bench/load.sh: POSTs one AdmissionReview over keep-alive and,
-- at the end, prints one machine-readable line that load.sh turns into its table.
--
--   wrk -t1 -c64 -d10s -s bench/post.lua https://127.0.0.1:8443/mutate -- FILE
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
