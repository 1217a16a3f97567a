#!/usr/bin/env python3
"""Review latency and peak memory of the real server while it is attacked.

  bench/attack.py --server BIN --certs GENERATE_SH --fixtures DIR [--reviews N] [--smoke]

For each row a fresh server starts (so its VmHWM is that attack's alone), the
attack runs in background threads for as long as the row is measured, and a
client sends N reviews on one keep-alive connection with the request
kube-apiserver sends (POST /mutate?timeout=5s with Go's transport headers),
then N/10 reviews each on a new TLS connection, from a process of its own. The server runs on CPU 0,
this process (attackers and the measured client) on CPU 1. Prints per row the review
p50/p99 on the keep-alive connection, the p99 on new connections, the
server's peak RSS, and how many attack requests or connections were made.
The attacks are those of tests/server/, whose helpers (server_harness.py) are used.
--smoke (bench/attack.sh --smoke, for CTest): every row as usual, then exits 1 when a
figure is missing, not finite (a review answered other than 200 counts as infinite) or
zero, or an attack made no requests, so that a broken script fails instead of printing
such rows.
"""
import argparse
import atexit
import json
import math
import os
import subprocess
import resource
import shutil
import socket
import ssl
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "server"))
import server_harness as st  # noqa: E402


def percentile(samples, p):
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p / 100))] * 1000


def keep_alive_reviews(server, n):
    body = st.fixture("kuberay-0.4-worker.json")
    headers = {"User-Agent": "kube-apiserver-admission", "Accept": "application/json, */*",
               "Accept-Encoding": "gzip"}
    times = []
    with server.connect(timeout=10) as s:
        for _ in range(n):
            t0 = time.perf_counter()
            status, _, _ = server.request(s, "POST", "/mutate?timeout=5s", body, headers)
            times.append(time.perf_counter() - t0 if status == 200 else float("inf"))
    return times


def measure_elsewhere(server, n):
    """The reviews from a process of their own: attack threads here hold this process's GIL."""
    cmd = [sys.executable, os.path.abspath(__file__), "--server", st.ARGS.server, "--certs", st.ARGS.certs,
           "--fixtures", st.ARGS.fixtures, "--reviews", str(n), "--measure", f"{server.port}:{server.ca}"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(port_and_ca, n):
    port, ca = port_and_ca.split(":", 1)

    class Target:  # what server_harness's helpers use of a Server
        def __init__(self):
            self.port, self.ca, self.client_cert = int(port), ca, None
        context = st.Server.context
        connect = st.Server.connect
        request = st.Server.request
        post = st.Server.post
    target = Target()
    print(json.dumps({"keep_alive": keep_alive_reviews(target, n), "fresh": st.fresh_reviews(target, max(10, n // 10))}))


class Attack:
    """Runs `step` over and over in `threads` threads until stopped; counts the steps."""

    def __init__(self, step, threads=1):
        self.step, self.stopping, self.count = step, threading.Event(), 0
        self.threads = [threading.Thread(target=self.run, daemon=True) for _ in range(threads)]

    def run(self):
        while not self.stopping.is_set():
            try:
                self.step()
            except Exception:  # noqa: BLE001 - an attack step may fail in any way
                pass
            self.count += 1

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=30)


def hostile_step(server, kind, volume):
    return lambda: st.hostile(server, kind, volume)


def many_hostile_step(server, n, volume):
    """n chunked bodies of `volume` bytes at once, pumped from one thread: with a thread each, 64
    runnable threads would starve the measuring process on the shared CPU instead of the server."""
    import selectors

    def step():
        sel = selectors.DefaultSelector()
        piece = b"10000\r\n" + b"a" * 0x10000 + b"\r\n"
        for _ in range(n):
            s = server.connect(timeout=10)
            s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Transfer-Encoding: chunked\r\n\r\n")
            s.setblocking(False)
            sel.register(s, selectors.EVENT_WRITE, [0])
        deadline = time.time() + 30
        while sel.get_map() and time.time() < deadline:
            for key, _ in sel.select(timeout=1):
                try:
                    key.data[0] += key.fileobj.send(piece)
                    done = key.data[0] >= volume
                except (ssl.SSLWantWriteError, ssl.SSLWantReadError):
                    continue
                except OSError:
                    done = True
                if done:
                    sel.unregister(key.fileobj)
                    key.fileobj.close()
        for key in list(sel.get_map().values()):
            key.fileobj.close()
    return step


def stalled(server, handshakes, requests):
    """Opens connections that stall inside a handshake or a request; returns them."""
    held = []
    for _ in range(handshakes):
        raw = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        raw.sendall(b"\x16\x03\x01\x02\x00")
        held.append(raw)
    for _ in range(requests):
        s = server.connect()
        s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
        held.append(s)
    return held


def pipeline_step(server):
    body = st.fixture("kuberay-0.4-worker.json")
    head = (f"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    s = server.connect(timeout=10)
    def drain():
        try:
            while s.recv(1 << 20):
                pass
        except (OSError, ValueError):
            pass
    threading.Thread(target=drain, daemon=True).start()
    for _ in range(50):
        s.sendall((head + body) * 64)
    s.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--certs", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--reviews", type=int, default=2000)
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # PORT:CA, in the measuring process
    args = parser.parse_args()
    st.ARGS = argparse.Namespace(server=args.server, certs=args.certs, fixtures=args.fixtures)
    if args.measure:
        return measure(args.measure, args.reviews)
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 16384), hard))
    work = tempfile.mkdtemp(prefix="ray-webhook-attack-")
    # CTest runs this on every test run (--smoke): its certificates and logs go with it.
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    st.make_certs(os.path.join(work, "certs"))

    rows = [
        ("no attack", lambda s: None, []),
        ("chunked body, 300 MiB each", lambda s: Attack(hostile_step(s, "chunked", 300 << 20)).start(), []),
        ("no Content-Length, 300 MiB each", lambda s: Attack(hostile_step(s, "no-length", 300 << 20)).start(), []),
        ("one 200 MiB header line", lambda s: Attack(hostile_step(s, "long-line", 200 << 20)).start(), []),
        ("16 MiB of short header lines", lambda s: Attack(hostile_step(s, "many-lines", 16 << 20)).start(), []),
        ("64 chunked bodies of 32 MiB at once, over and over", lambda s: Attack(many_hostile_step(s, 64, 32 << 20)).start(),
         []),
        ("1,000 stalled handshakes + 1,000 stalled requests", lambda s: stalled(s, 1000, 1000),
         ["--max-connections", "4096"]),
        ("3,000 silent connections, soft fd limit 1024", lambda s: [
            socket.create_connection(("127.0.0.1", s.port), timeout=5) for _ in range(3000)], "soft-1024"),
        ("a client pipelining without pause", lambda s: Attack(lambda: pipeline_step(s)).start(), []),
    ]
    print(f"{'attack':52} {'keep-alive p50':>14} {'p99':>8} {'new-conn p99':>12} {'peak RSS':>9} {'attack':>8}")
    # The server on one CPU, this process (the attack and the measured client) on the other, as in bench/load.sh.
    two = os.cpu_count() >= 2
    failures = []
    if two:
        os.sched_setaffinity(0, {1})
    for name, start, flags in rows:
        soft_1024 = flags == "soft-1024"
        if soft_1024:
            flags = []

        def preexec(soft_1024=soft_1024):
            if two:
                os.sched_setaffinity(0, {0})
            if soft_1024:
                resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))
        # Under --smoke the server stops at once, not after 5 s of draining, most of a row's time.
        smoke_flags = ["--drain-delay", "0"] if args.smoke else []
        server = st.Server(work, "--log-level", "warn", *flags, *smoke_flags, preexec=preexec)
        attack = None
        try:
            attack = start(server)
            time.sleep(0.5)
            measured = measure_elsewhere(server, args.reviews)
            times, fresh = measured["keep_alive"], measured["fresh"]
            rss = st.peak_rss_mb(server)
        finally:
            if isinstance(attack, Attack):
                attack.stop()
            elif isinstance(attack, list):
                for c in attack:
                    c.close()
            server.stop()
        made = attack.count if isinstance(attack, Attack) else len(attack) if isinstance(attack, list) else 0
        figures = {"keep-alive p50": percentile(times, 50), "keep-alive p99": percentile(times, 99),
                   "new-conn p99": percentile(fresh, 99), "peak RSS": rss}
        print(f"{name:52} {figures['keep-alive p50']:11.3f} ms {figures['keep-alive p99']:5.2f} ms "
              f"{figures['new-conn p99']:9.2f} ms {rss:6.1f} MB {made:8}", flush=True)
        if args.smoke:
            for what, value in figures.items():
                if not (math.isfinite(value) and value > 0):
                    failures.append(f"{name}: {what} is {value} (a review not answered 200 counts as inf)")
            if len(times) != args.reviews or len(fresh) != max(10, args.reviews // 10):
                failures.append(f"{name}: {len(times)} and {len(fresh)} reviews measured")
            if attack is not None and made == 0:
                failures.append(f"{name}: the attack made no requests or connections")
    if args.smoke:
        for failure in failures:
            print(f"attack.py: smoke: FAIL: {failure}", file=sys.stderr)
        print(f"attack.py: smoke: {'ok' if not failures else f'{len(failures)} check(s) failed'}", file=sys.stderr)
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
