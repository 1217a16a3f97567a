"""Limits on what a client may send or hold: the 413, 415 and header limits, deep nesting, a
review large enough to grow a decoder, hostile framings with the peak RSS, and more connections
than the open-file limit allows."""
import json
import resource
import socket
import ssl
import threading
import time

from server_harness import closed_by_server, fixture, hostile, metric, peak_rss_mb, read_response


def review_ok(server):
    try:
        status, _, body = server.post("/mutate", fixture("kuberay-0.4-worker.json"))
        return status == 200 and b'"allowed":true' in body
    except OSError:
        return False


def test_limits(start_server):
    server = start_server()
    with server.connect() as s:
        big = b" " * (7 * 1024 * 1024 + 1)
        status, headers, body = server.request(s, "POST", "/mutate", big, {"Connection": "close"})
    assert status == 413, f"a body over 7 MiB is 413 (got {status})"
    assert json.loads(body).get("reason") == "RequestEntityTooLarge", "413 has a JSON Status body"
    assert headers.get("content-type") == "application/json", f"413 says it is JSON (got {headers})"
    review = fixture("kuberay-0.4-worker.json")
    status, _, body = server.post("/mutate", review, headers={"Content-Type": "text/plain"})
    assert status == 415 and json.loads(body)["code"] == 415, f"text/plain is 415 (got {status})"
    status, headers, body = server.post("/mutate", review, headers={"Content-Type": "application/json; charset=utf-8"})
    assert status == 200, f"a charset parameter is fine (got {status})"
    # The answer is moved into the response, not copied (webhook_server.cpp, SetJsonBody): its
    # type and length must still be those of the AdmissionReview it carries.
    assert headers.get("content-type") == "application/json", f"the answer says it is JSON (got {headers})"
    assert int(headers.get("content-length", "-1")) == len(body) and \
        json.loads(body)["response"]["uid"] == json.loads(review)["request"]["uid"], \
        "the answer's Content-Length is its body's, an AdmissionReview for the request"
    with server.connect() as s:
        s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
        status, _, _ = read_response(s)
    assert status == 415, f"a missing Content-Type is 415 (got {status})"
    deep = b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","o":' + \
        b"[" * 100000 + b"]" * 100000 + b"}}"
    status, _, body = server.post("/validate", deep)
    assert status == 200 and json.loads(body)["response"]["allowed"] is True, \
        f"100,000 levels of nesting in a field no rule reads are skipped, not recursed into (got {status})"
    try:
        with server.connect() as s:
            status, _, _ = server.request(s, "GET", "/healthz", headers={"X-Big": "a" * 100000})
    except (ConnectionError, ssl.SSLError, OSError):
        status = "closed"
    assert status != 200, f"a 100 KB header is refused (got {status})"
    assert server.post("/mutate", review)[0] == 200, "the server keeps serving after every refusal"
    assert server.proc.poll() is None, "the server is still running"


def test_large_reviews(start_server):
    # A review far above the decoder's 64 KiB default grows one decoder; the
    # maintenance thread gives that back once it has sat idle (5 to 10 s).
    server = start_server("--log-level", "debug")
    review = json.loads(fixture("kuberay-1.0-worker-short.json"))
    review["request"]["object"]["metadata"]["annotations"]["example.com/padding"] = "x" * (2 * 1024 * 1024)
    large = json.dumps(review).encode()
    status, _, body = server.post("/mutate", large)
    assert status == 200 and json.loads(body)["response"]["allowed"] is True, f"a 2 MB review is answered (got {status})"
    assert server.logged("gave back the buffers of 1 idle decoder", within=15.0), \
        "the decoder the large review grew is shrunk once idle"
    status, _, body = server.post("/mutate", large)
    assert status == 200 and "patch" in json.loads(body)["response"], \
        f"a large review after the shrink is answered in full (got {status})"
    status, _, _ = server.post("/mutate", fixture("kuberay-1.0-worker-short.json"))
    assert status == 200, f"so is a small one (got {status})"


def test_hostile_requests(start_server):
    server = start_server()
    want = {"chunked": 411, "no-length": 411, "long-line": 431, "many-lines": 431}
    volume = {"chunked": 300 << 20, "no-length": 300 << 20, "long-line": 200 << 20, "many-lines": 16 << 20}
    for kind in want:
        status = hostile(server, kind, volume[kind])
        assert status in (want[kind], None), f"{kind}: answered {want[kind]} or closed (got {status})"
        assert status is not None, f"{kind}: the refusal reached the client before the close (got {status})"
        rss = peak_rss_mb(server)
        assert rss < 64, f"{kind}: peak RSS {rss:.1f} MB stays under 64 MB"
        assert review_ok(server), f"{kind}: the next review is answered"
    # 64 at once, 16 of each kind, each sending up to 32 MiB.
    threads = [threading.Thread(target=hostile, args=(server, kind, 32 << 20)) for kind in want for _ in range(16)]
    for t in threads:
        t.start()
    try:
        time.sleep(0.5)
        assert review_ok(server), "a review is answered while 64 hostile requests run"
    finally:
        for t in threads:
            t.join(timeout=60)
    rss = peak_rss_mb(server)
    assert rss < 64, f"64 hostile requests at once: peak RSS {rss:.1f} MB stays under 64 MB"
    assert review_ok(server), "64 hostile requests at once: the next review is answered"
    # A declared length over the limit is refused before any of the body is read.
    with server.connect() as s:
        s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 8000000\r\n\r\n")
        status, headers, _ = read_response(s)
        assert status == 413 and headers.get("connection") == "close", f"8 MB announced: 413 and close ({status})"
        assert closed_by_server(s), "and the connection is closed"
    with server.connect() as s:
        s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Encoding: gzip\r\nContent-Length: 10\r\n\r\n0123456789")
        assert read_response(s)[0] == 415, "Content-Encoding on a request is 415"
    assert server.proc.poll() is None, "the server is still running"


def test_file_limit(start_server):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert hard >= 8192, f"this machine's hard open-file limit {hard} is too low for the test"
    # This process holds the 3,000 client ends; the server starts at a soft limit of 1,024.
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 16384), hard))
    soft_1024 = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # noqa: E731
    silent = []
    try:
        server = start_server(preexec=soft_1024)
        with open(f"/proc/{server.proc.pid}/limits") as f:
            line = next(l for l in f if l.startswith("Max open files"))
        assert int(line.split()[3]) == hard, f"the soft open-file limit is raised to the hard one ({line.strip()})"
        for _ in range(3000):
            silent.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        time.sleep(0.5)
        t0 = time.monotonic()
        ok = review_ok(server)
        took = time.monotonic() - t0
        print(f"file_limit: a fresh review took {took:.3f} s with 3,000 silent connections")
        assert ok and took < 1, f"with 3,000 silent connections a fresh review is answered within 1 s ({took:.2f} s)"
        shed = opened = 0
        for _ in range(40):  # the metrics are exported every 250 ms
            with server.connect() as s:
                text = server.request(s, "GET", "/metrics")[2].decode()
            shed = metric(text, "ray_webhook_connections_shed_total") or 0
            opened = metric(text, "ray_webhook_connections_open") or 0
            if shed >= 952:
                break
            time.sleep(0.25)
        assert shed >= 952, f"connections beyond --max-connections closed the oldest idle ones ({shed:.0f} of 952)"
        assert opened <= 2048, f"at most --max-connections are open ({opened:.0f})"
    finally:
        for s in silent:
            s.close()
        # The other tests of this process keep the limit they started with.
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
