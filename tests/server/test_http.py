"""How reviews are framed and answered: 100 Continue, the direct path's answers against the routed
ones, and no compression."""
import ssl

from server_harness import closed_by_server, fixture, raw_response, read_response


def test_expect_continue(start_server):
    server = start_server()
    body = fixture("kuberay-0.4-worker.json")
    with server.connect() as s:
        s.sendall((f"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   f"Expect: 100-continue\r\nContent-Length: {len(body)}\r\n\r\n").encode())
        s.settimeout(5)
        first = s.recv(100)
        assert first == b"HTTP/1.1 100 Continue\r\n\r\n", f"100 Continue for a request that passes ({first!r})"
        s.sendall(body)
        assert read_response(s)[0] == 200, "then the review's answer"
    with server.connect() as s:
        smuggled = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
        s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nExpect: 100-continue\r\n"
                  + f"Content-Length: {len(smuggled)}\r\n\r\n".encode())
        status, headers, _ = read_response(s)
        assert status == 415 and headers.get("connection") == "close", f"a refused request gets no 100 ({status})"
        try:
            s.sendall(smuggled)  # its body, sent anyway, must never be answered as a request
            rest = s.recv(4096)
        except (OSError, ssl.SSLError):
            rest = b""
        assert rest == b"", f"nothing inside the body is answered ({rest[:40]!r})"


def test_direct_reviews(start_server):
    # A path that is /mutate only once percent-decoded is routed as /mutate
    # (src/server/route.cpp), and both answers come from the one answer writer,
    # so the two can be compared byte for byte.
    server = start_server("--idle-timeout", "7s")

    def send(sock, target, body=b"", extra=""):
        sock.sendall((f"POST {target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                      f"{extra}Content-Length: {len(body)}\r\n\r\n").encode() + body)
        return raw_response(sock)

    with server.connect() as s:
        routed, direct = send(s, "/mut%61te"), send(s, "/mutate")
    assert routed.startswith(b"HTTP/1.1 400 ") and routed == direct, \
        f"an empty review is answered byte for byte as on its percent-encoded path ({direct[:200]!r} against {routed[:200]!r})"
    with server.connect() as s:
        routed_close = send(s, "/mut%61te", extra="Connection: close\r\n")
    with server.connect() as s:
        direct_close = send(s, "/validate", extra="Connection: close\r\n")
        closed = closed_by_server(s)
    assert direct_close == routed_close and b"\r\nConnection: close\r\n" in direct_close and closed, \
        "with Connection: close too, and the connection is closed"
    body = fixture("kuberay-0.4-worker.json")
    with server.connect() as s:
        ok = send(s, "/mutate?timeout=10s", body, "User-Agent: kube-apiserver-admission\r\nAccept-Encoding: gzip\r\n")
        pipelined = [send(s, "/mutate", body)]
        s.sendall(b"".join((f"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                            f"Content-Length: {len(body)}\r\n\r\n").encode() + body for _ in range(3)))
        pipelined += [raw_response(s) for _ in range(3)]

    def lines(answer):
        return answer.partition(b"\r\n\r\n")[0].split(b"\r\n")

    shape = [l for l in lines(ok)[1:] if not l.startswith(b"Content-Length:")]
    routed_shape = [l for l in lines(routed)[1:] if not l.startswith(b"Content-Length:")]
    assert lines(ok)[0] == b"HTTP/1.1 200 OK" and shape == routed_shape and b"Keep-Alive: timeout=7, max=100000" in shape, \
        f"a review's answer has the routed answer's headers in their order ({lines(ok)!r} against {lines(routed)!r})"
    assert all(p == ok for p in pipelined), \
        "reviews pipelined behind one another get the same answer (the next request sits where the parser may read past the body)"


def test_no_compression(start_server):
    server = start_server()
    gzip_please = {"Accept-Encoding": "gzip, deflate, br"}
    status, headers, body = server.post("/mutate", fixture("kuberay-0.4-worker.json"), headers=gzip_please)
    assert status == 200 and "content-encoding" not in headers and body.startswith(b"{"), \
        f"a review's answer is not compressed (got {status}, {headers.get('content-encoding')})"
    status, headers, body = server.post("/mutate", b"not json", headers=gzip_please)
    assert status == 400 and "content-encoding" not in headers and body.startswith(b"{"), \
        "an error's answer is not compressed"
    with server.connect() as s:
        status, headers, body = server.request(s, "GET", "/metrics", headers=gzip_please)
    assert status == 200 and "content-encoding" not in headers and body.startswith(b"#"), \
        "/metrics is not compressed"
