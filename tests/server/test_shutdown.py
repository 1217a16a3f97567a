"""SIGTERM: readiness drops at once, the listener closes after --drain-delay, requests in flight
finish, and no request is lost while clients send at full speed."""
import json
import signal
import threading
import time

from server_harness import closed_by_server, fixture, read_response


def test_sigterm_drain(start_server):
    server = start_server("--drain-delay", "1s", "--shutdown-grace", "10s")
    body = fixture("kuberay-0.4-worker.json")
    idle = server.connect()
    inflight = None
    try:
        assert server.request(idle, "POST", "/mutate", body)[0] == 200, "keep-alive connection serves a request"
        # A request in flight: headers and half the body now, the rest after the drain delay.
        inflight = server.connect(timeout=15)
        head = (f"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        inflight.sendall(head + body[: len(body) // 2])
        time.sleep(0.3)
        t0 = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        time.sleep(0.2)
        assert server.get("/readyz")[0] == 503, "/readyz is 503 at once after SIGTERM"
        assert server.get("/healthz")[0] == 200, "new connections are still accepted during the drain delay"
        time.sleep(1.5)
        refused = False
        try:
            server.get("/healthz")
        except OSError:
            refused = True
        assert refused, "after the drain delay the listener no longer accepts"
        inflight.sendall(body[len(body) // 2:])
        status, _, answer = read_response(inflight)
        assert status == 200 and json.loads(answer)["response"]["allowed"], "the in-flight request finishes with 200"
        assert closed_by_server(idle), "the idle keep-alive connection is closed"
        code = server.proc.wait(timeout=15)
        assert code == 0, f"the process exits 0 (got {code})"
        assert time.monotonic() - t0 < 11, f"and within the grace period ({time.monotonic() - t0:.1f} s)"
    finally:
        idle.close()
        if inflight:
            inflight.close()


def test_shutdown_under_load(start_server):
    server = start_server("--drain-delay", "1s", "--shutdown-grace", "10s")
    body = fixture("kuberay-0.4-worker.json")
    head = (f"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    sigterm_at = [None]
    stats = {"sent": 0, "answered": 0, "lost": 0, "kept_alive_after": 0, "refused": 0}
    lock = threading.Lock()

    def client():
        s = None
        while True:
            try:
                if s is None:
                    s = server.connect()
            except OSError:
                with lock:
                    stats["refused"] += 1  # nothing was sent: the listener is gone
                return
            sent_at = time.monotonic()
            try:
                s.sendall(head + body)
            except OSError:
                with lock:
                    stats["lost"] += 1
                return
            with lock:
                stats["sent"] += 1
            try:
                status, headers, _ = read_response(s)
            except (OSError, ConnectionError, ValueError):
                with lock:
                    stats["lost"] += 1  # written and never answered: a failed Pod creation
                return
            with lock:
                stats["answered"] += status == 200
                if sigterm_at[0] and sent_at > sigterm_at[0] + 0.05 and headers.get("connection") != "close":
                    stats["kept_alive_after"] += 1
            if headers.get("connection") == "close":
                s.close()
                s = None

    clients = [threading.Thread(target=client, daemon=True) for _ in range(8)]
    for c in clients:
        c.start()
    time.sleep(1)
    sigterm_at[0] = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    code = server.proc.wait(timeout=20)
    for c in clients:
        c.join(timeout=10)
    print(f"shutdown_under_load: {stats}")
    assert stats["sent"] > 100, f"the clients sent at full speed ({stats['sent']} requests)"
    assert stats["lost"] == 0, f"no request was lost across SIGTERM ({stats['lost']} lost)"
    assert stats["answered"] == stats["sent"], "every request sent was answered 200"
    assert stats["kept_alive_after"] == 0, \
        f"after SIGTERM every answer carries Connection: close ({stats['kept_alive_after']} did not)"
    assert code == 0, f"the process exits 0 (got {code})"
