"""A client pipelining reviews without pause, and another client's latency beside it.

A module of its own: its bound is another client's latency, so CTest runs it alone
(server.pipelining is RUN_SERIAL in tests/CMakeLists.txt)."""
import select
import ssl
import threading
import time

from server_harness import fixture, p99_ms


def test_pipelining(start_server):
    server = start_server()
    body = fixture("kuberay-0.4-worker.json")
    stop = threading.Event()
    answered = [0]

    def flood():
        # One thread owns the socket: an SSL object must not be read and written from two threads at
        # once (CPython releases the GIL inside SSL_read and SSL_write), so writes and reads interleave
        # through select on a non-blocking socket.
        s = server.connect(timeout=10)
        s.setblocking(False)
        head = (f"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        batch = (head + body) * 64
        unsent = memoryview(batch)
        try:
            while not stop.is_set():
                readable, writable, _ = select.select([s], [s], [], 0.1)
                if readable or s.pending():
                    try:
                        if not s.recv(1 << 20):
                            return
                        answered[0] += 1
                    except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                        pass
                if writable:
                    try:
                        # A retried write passes the same bytes again, as OpenSSL requires.
                        unsent = unsent[s.send(unsent):] or memoryview(batch)
                    except (ssl.SSLWantReadError, ssl.SSLWantWriteError):
                        pass
        except OSError:
            pass
        finally:
            s.close()

    flooder = threading.Thread(target=flood, daemon=True)
    try:
        flooder.start()
        time.sleep(0.5)
        times = []
        with server.connect() as s:
            for _ in range(200):
                t0 = time.perf_counter()
                status, _, _ = server.request(s, "POST", "/mutate", body)
                times.append(time.perf_counter() - t0 if status == 200 else float("inf"))
        p99 = p99_ms(times)
        print(f"pipelining: another client's review p50 {sorted(times)[100] * 1000:.2f} ms, p99 {p99:.2f} ms; "
              f"the pipelining client read {answered[0]} chunks of answers")
        assert answered[0] > 0, "the pipelining client is served too"
        assert p99 < 10, \
            f"a client pipelining without pause delays another's review by a few ms at most (p99 {p99:.1f} ms)"
    finally:
        stop.set()
        flooder.join(timeout=10)
