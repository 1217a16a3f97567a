"""Connections that stay: hundreds idle, kept alive past --idle-timeout, a client sending a byte a
second, and thousands stalled mid-handshake or mid-request while fresh clients are served."""
import socket
import ssl
import time

from server_harness import closed_by_server, fixture, fresh_reviews, metric, p99_ms, read_response


def test_idle_connections(start_server):
    # Eight ready threads: the pool must grow for 500 idle connections and one more client.
    server = start_server("--threads", "8")
    conns = []
    try:
        ctx = server.context()
        for _ in range(500):
            s = server.connect(ctx)
            conns.append(s)
        body = fixture("kuberay-0.4-worker.json")
        times = []
        for _ in range(5):
            t = time.monotonic()
            status, _, _ = server.post("/mutate", body)
            times.append(time.monotonic() - t)
            assert status == 200, "a fresh client is answered with 500 idle connections open"
        best = min(times)
        assert best < 0.1, f"a fresh review is answered within 100 ms (best of 5: {best * 1000:.1f} ms)"
        assert server.request(conns[0], "POST", "/mutate", body)[0] == 200, "an idle connection still serves"
    finally:
        for s in conns:
            s.close()


def test_keep_alive(start_server):
    server = start_server("--idle-timeout", "1s", "--threads", "4")
    conns = []
    try:
        body = fixture("kuberay-0.4-worker.json")
        s = server.connect()
        conns.append(s)
        for i in range(3):
            assert server.request(s, "POST", "/mutate", body)[0] == 200, f"request {i + 1} on one kept-alive connection"
        # Two requests in one write: the second is already read when the first is answered.
        head = (f"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        s.sendall(head + body + head + body)
        first, second = read_response(s), read_response(s)
        assert first[0] == 200 and second[0] == 200, \
            f"two pipelined requests are both answered ({first[0]}, {second[0]})"
        # Idle connections wait without a thread each (ConnectionLoop).
        ctx = server.context()
        for _ in range(200):
            conns.append(server.connect(ctx))
        assert server.request(conns[-1], "POST", "/mutate", body)[0] == 200, "the newest of 200 connections serves"
        with open(f"/proc/{server.proc.pid}/status") as f:
            threads = int(next(line.split()[1] for line in f if line.startswith("Threads:")))
        assert threads < 100, f"201 open connections need fewer than 100 threads (got {threads})"
        time.sleep(2.5)
        assert closed_by_server(s), "a connection idle for longer than --idle-timeout is closed"
        assert server.post("/mutate", body)[0] == 200, "a new connection is served after that"
    finally:
        for c in conns:
            c.close()


def seconds_until_cut(sock, data):
    """Sends data a byte a second; how long until the server closed sock (None: never)."""
    start = time.monotonic()
    for ch in data:
        try:
            sock.sendall(bytes([ch]))
        except (OSError, ssl.SSLError):
            return time.monotonic() - start
        time.sleep(1)
        # A closed socket shows up as a readable EOF before a failed send.
        sock.setblocking(False)
        try:
            if sock.recv(1) == b"":
                return time.monotonic() - start
        except (ssl.SSLWantReadError, BlockingIOError):
            pass
        except (OSError, ssl.SSLError):
            return time.monotonic() - start
        finally:
            sock.setblocking(True)
    return None


def test_slowloris(start_server):
    # The deadline is --request-timeout plus --kube-api-timeout (2 s by default).
    server = start_server("--idle-timeout", "1s", "--request-timeout", "2s")
    with server.connect(timeout=20) as slow:
        slow.sendall(b"POST /mutate HTTP/1.1\r\n")
        cut = seconds_until_cut(slow, b"Host: localhost\r\nX-Slow: " + b"a" * 30)
    assert cut is not None and cut < 10, f"a one-byte-a-second client is cut off (after {cut} s)"
    # A TLS record header, then a ClientHello that never ends.
    with socket.create_connection(("127.0.0.1", server.port), timeout=20) as raw:
        cut = seconds_until_cut(raw, b"\x16\x03\x01\x02\x00\x01" + b"\x00" * 30)
    assert cut is not None and cut < 10, f"a one-byte-a-second handshake is cut off (after {cut} s)"
    assert server.post("/mutate", fixture("kuberay-0.4-worker.json"))[0] == 200, "others are still served"
    text = server.get("/metrics")[2].decode()
    assert (metric(text, "ray_webhook_connections_cut_total") or 0) >= 2, "the cuts are counted"


def test_stalled_clients(start_server):
    server = start_server("--max-connections", "4096", "--request-timeout", "3s")
    held = []
    try:
        # 1,000 stalled inside a handshake: 5 bytes of a ClientHello.
        for _ in range(1000):
            raw = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            raw.sendall(b"\x16\x03\x01\x02\x00")
            held.append(raw)
        # 1,000 stalled inside a request: the head, then half the body.
        for _ in range(1000):
            s = server.connect()
            s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 100\r\n\r\n{\"half\":")
            held.append(s)
        times = fresh_reviews(server, 100)
        p99 = p99_ms(times)
        print(f"stalled_clients: review p50 {sorted(times)[50] * 1000:.2f} ms, p99 {p99:.2f} ms with 2,000 stalled")
        assert p99 < 50, f"with 2,000 stalled connections a fresh review's p99 is under 50 ms (got {p99:.1f} ms)"
        time.sleep(4)
        with server.connect() as s:
            text = server.request(s, "GET", "/metrics")[2].decode()
        cut = metric(text, "ray_webhook_connections_cut_total") or 0
        assert cut >= 2000, f"--request-timeout cut the stalled handshakes and requests ({cut:.0f} of 2000)"
        assert closed_by_server(held[0], 1) and closed_by_server(held[-1], 1), "and they are closed"
    finally:
        for h in held:
            h.close()
