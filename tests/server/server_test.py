#!/usr/bin/env python3
"""Behaviour of the real ray-webhook server under operational stress.

Each case starts `ray-webhook serve` with a throw-away certificate on a free
loopback port, drives it with Python's ssl module, and stops it. Cases:
cert_rotation, cert_rejected, sigterm_drain, idle_connections, slowloris,
limits, metrics, client_ca, tls_versions, and the edge under attack:
hostile_requests, no_compression, stalled_clients, file_limit, pipelining,
expect_continue, shutdown_under_load, probes_with_mtls, lookup_deadline,
ipv6_api, cert_key_type.

  server_test.py --server BIN --certs GENERATE_SH --fixtures DIR CASE

Timing thresholds are generous on purpose: they check behaviour, not speed.
Prints "N passed, M failed" and exits 1 on any failure.
"""
import argparse
import datetime
import json
import os
import re
import select
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

ARGS = None
RESULTS = {"passed": 0, "failed": 0}


def check(ok, what):
    if ok:
        RESULTS["passed"] += 1
    else:
        RESULTS["failed"] += 1
        print(f"FAIL: {what}", file=sys.stderr)
    return ok


def make_certs(out):
    subprocess.run(["bash", ARGS.certs, "--out", out], check=True, stderr=subprocess.DEVNULL)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """ray-webhook serve on a free port; stderr goes to a log file."""

    def __init__(self, workdir, *flags, cert_flags=None, client_cert=None, preexec=None):
        self.client_cert = client_cert  # (cert, key) every connection presents, if set
        self.port = free_port()
        self.log_path = os.path.join(workdir, f"server-{self.port}.log")
        certs = cert_flags or ["--tls-cert", f"{workdir}/certs/tls.crt", "--tls-key", f"{workdir}/certs/tls.key"]
        self.probe_port = free_port()
        cmd = [ARGS.server, "serve", "--bind", "127.0.0.1", "--port", str(self.port),
               "--probe-port", str(self.probe_port), *certs, *flags]
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log, preexec_fn=preexec)
        self.ca = f"{workdir}/certs/ca.crt"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {open(self.log_path).read()}")
            try:
                if self.get("/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("server did not start")

    def context(self, **kw):
        ctx = ssl.create_default_context(cafile=self.ca)
        if self.client_cert:
            ctx.load_cert_chain(*self.client_cert)
        for k, v in kw.items():
            setattr(ctx, k, v)
        return ctx

    def connect(self, ctx=None, timeout=5):
        raw = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        return (ctx or self.context()).wrap_socket(raw, server_hostname="localhost")

    def request(self, sock, method, path, body=b"", headers=None):
        hdrs = {"Host": "localhost", "Content-Length": str(len(body))}
        if body:
            hdrs["Content-Type"] = "application/json"
        hdrs.update(headers or {})
        head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n"
        sock.sendall(head.encode() + body)
        return read_response(sock)

    def get(self, path):
        with self.connect(timeout=2) as s:
            return self.request(s, "GET", path, headers={"Connection": "close"})

    def post(self, path, body, ctx=None, headers=None):
        with self.connect(ctx) as s:
            return self.request(s, "POST", path, body, {"Connection": "close", **(headers or {})})

    def log_text(self):
        self.log.flush()
        return open(self.log_path).read()

    def logged(self, text, within=3.0):
        """The log holds text within `within` seconds (info lines are written at least once a second)."""
        deadline = time.monotonic() + within
        while text not in self.log_text():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)
        return True

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.log.close()


def raw_response(sock):
    """One whole HTTP/1.1 response as sent: its head and its Content-Length body (shorter at an EOF)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed before a response")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = next((int(l.split(b":", 1)[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")),
                  0)
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return head + b"\r\n\r\n" + rest[:length]


def read_response(sock):
    """Reads one HTTP/1.1 response with Content-Length; returns (status, headers, body)."""
    head, _, body = raw_response(sock).partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
    return status, headers, body


def closed_by_server(sock, within=5):
    """The server closes sock within `within` seconds (an EOF or a reset, not a timeout)."""
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except (ConnectionError, ssl.SSLError):
        return True
    except socket.timeout:
        return False


def fixture(name):
    with open(os.path.join(ARGS.fixtures, "reviews", name), "rb") as f:
        return f.read()


def peer_serial(server):
    with server.connect() as s:
        der = s.getpeercert(binary_form=True)
    out = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-serial"], input=der,
                         capture_output=True, check=True)
    return out.stdout.decode().strip()


def metric(text, name, **labels):
    """The value of one sample in the Prometheus text format, or None."""
    for line in text.splitlines():
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        found = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        if all(found.get(k) == v for k, v in labels.items()):
            return float(m.group(4))
    return None


def not_after(cert):
    """A PEM certificate's notAfter as Unix time, as openssl prints it."""
    out = subprocess.run(["openssl", "x509", "-in", cert, "-noout", "-enddate"], capture_output=True,
                         check=True).stdout.decode().strip()
    when = datetime.datetime.strptime(out.split("=", 1)[1], "%b %d %H:%M:%S %Y %Z")
    return when.replace(tzinfo=datetime.timezone.utc).timestamp()


# Kubernetes mounts a Secret as DIR/tls.crt -> ..data/tls.crt, ..data -> ..<timestamp>;
# an update writes a new timestamped folder and swaps ..data with a rename.
def secret_volume_write(volume, src):
    stamp = os.path.join(volume, f"..{time.time_ns()}")
    os.makedirs(stamp)
    for name in ("tls.crt", "tls.key"):
        shutil.copy(os.path.join(src, name), os.path.join(stamp, name))
    tmp = os.path.join(volume, "..data_tmp")
    os.symlink(os.path.basename(stamp), tmp)
    os.rename(tmp, os.path.join(volume, "..data"))
    for name in ("tls.crt", "tls.key"):
        link = os.path.join(volume, name)
        if not os.path.islink(link):
            os.symlink(os.path.join("..data", name), link)


def sign_with_ca(workdir, name, cn, extensions):
    """A key and a certificate in WORKDIR/NAME, signed by the test CA; returns the folder."""
    out = os.path.join(workdir, name)
    os.makedirs(out)
    c = os.path.join(workdir, "certs")
    subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", f"{out}/tls.key"],
                   check=True)
    subprocess.run(["openssl", "req", "-new", "-key", f"{out}/tls.key", "-subj", f"/CN={cn}", "-out",
                    f"{out}/tls.csr"], check=True)
    with open(f"{out}/ext", "w") as f:
        f.write(extensions)
    subprocess.run(["openssl", "x509", "-req", "-in", f"{out}/tls.csr", "-CA", f"{c}/ca.crt", "-CAkey",
                    f"{c}/ca.key", "-CAcreateserial", "-days", "2", "-extfile", f"{out}/ext", "-out",
                    f"{out}/tls.crt"], check=True, stderr=subprocess.DEVNULL)
    return out


def new_leaf(workdir, name):
    """A second serving pair from the same CA (a cert-manager renewal)."""
    return sign_with_ca(workdir, name, "renewed", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")


class Loop(threading.Thread):
    """Sends reviews on fresh connections until stopped; counts failures."""

    def __init__(self, server, body):
        super().__init__(daemon=True)
        self.server, self.body = server, body
        self.ok = self.failed = 0
        self.errors = []
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            try:
                status, _, _ = self.server.post("/mutate", self.body)
                if status == 200:
                    self.ok += 1
                else:
                    self.failed += 1
                    self.errors.append(status)
            except Exception as e:  # noqa: BLE001 - any failure counts
                self.failed += 1
                self.errors.append(repr(e))

    def stop(self):
        self.stopping.set()
        self.join()


def case_cert_rotation(work):
    volume = os.path.join(work, "volume")
    os.makedirs(volume)
    secret_volume_write(volume, os.path.join(work, "certs"))
    server = Server(work, "--cert-reload-interval", "500ms", cert_flags=["--cert-dir", volume])
    try:
        before = peer_serial(server)
        loop = Loop(server, fixture("kuberay-0.4-worker.json"))
        loop.start()
        time.sleep(1)
        renewed = new_leaf(work, "renewed")
        secret_volume_write(volume, renewed)
        want = subprocess.run(["openssl", "x509", "-in", f"{renewed}/tls.crt", "-noout", "-serial"],
                              capture_output=True, check=True).stdout.decode().strip()
        deadline = time.monotonic() + 10
        seen = before
        while time.monotonic() < deadline and seen != want:
            time.sleep(0.2)
            seen = peer_serial(server)
        time.sleep(1)
        loop.stop()
        check(seen == want, f"new connections use the renewed certificate within 10 s (serial {seen}, want {want})")
        check(before != want, "the renewed certificate differs from the first")
        check(loop.failed == 0 and loop.ok > 10, f"no request failed across the swap ({loop.ok} ok, {loop.failed} "
                                                 f"failed: {loop.errors[:3]})")
        text = server.get("/metrics")[2].decode()
        check((metric(text, "certwatcher_read_certificate_total") or 0) >= 2, "certificate reads are counted")
        expiry = metric(text, "ray_webhook_serving_certificate_expiration_timestamp_seconds")
        check(expiry == not_after(f"{renewed}/tls.crt"),
              f"the expiration gauge is the renewed certificate's notAfter ({expiry})")
        check(server.logged("serving certificate loaded"), "the reload is logged")
    finally:
        server.stop()


def case_cert_rejected(work):
    volume = os.path.join(work, "volume")
    os.makedirs(volume)
    secret_volume_write(volume, os.path.join(work, "certs"))
    server = Server(work, "--cert-reload-interval", "300ms", cert_flags=["--cert-dir", volume])
    try:
        before = peer_serial(server)
        # A half-written pair, then a key that does not match the certificate.
        broken = os.path.join(work, "broken")
        os.makedirs(broken)
        with open(os.path.join(work, "certs", "tls.crt")) as f:
            pem = f.read()
        with open(f"{broken}/tls.crt", "w") as f:
            f.write(pem[: len(pem) // 2])
        shutil.copy(os.path.join(work, "certs", "tls.key"), f"{broken}/tls.key")
        secret_volume_write(volume, broken)
        time.sleep(1.5)
        mismatched = new_leaf(work, "other")
        shutil.copy(os.path.join(work, "certs", "tls.key"), f"{mismatched}/tls.key")
        secret_volume_write(volume, mismatched)
        time.sleep(1.5)
        check(peer_serial(server) == before, "a pair that does not load leaves the old one in service")
        check(server.post("/mutate", fixture("kuberay-0.4-worker.json"))[0] == 200, "requests still succeed")
        check(server.logged("no PEM certificate"), "the half-written certificate is logged")
        check(server.logged("does not match"), "the mismatched key is logged")
        text = server.get("/metrics")[2].decode()
        check((metric(text, "certwatcher_read_certificate_errors_total") or 0) >= 2, "reload errors are counted")
    finally:
        server.stop()


def case_sigterm_drain(work):
    server = Server(work, "--drain-delay", "1s", "--shutdown-grace", "10s")
    body = fixture("kuberay-0.4-worker.json")
    idle = server.connect()
    check(server.request(idle, "POST", "/mutate", body)[0] == 200, "keep-alive connection serves a request")
    # A request in flight: headers and half the body now, the rest after the drain delay.
    inflight = server.connect(timeout=15)
    head = (f"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    inflight.sendall(head + body[: len(body) // 2])
    time.sleep(0.3)
    t0 = time.monotonic()
    server.proc.send_signal(signal.SIGTERM)
    time.sleep(0.2)
    check(server.get("/readyz")[0] == 503, "/readyz is 503 at once after SIGTERM")
    check(server.get("/healthz")[0] == 200, "new connections are still accepted during the drain delay")
    time.sleep(1.5)
    refused = False
    try:
        server.get("/healthz")
    except OSError:
        refused = True
    check(refused, "after the drain delay the listener no longer accepts")
    inflight.sendall(body[len(body) // 2:])
    status, _, answer = read_response(inflight)
    check(status == 200 and json.loads(answer)["response"]["allowed"], "the in-flight request finishes with 200")
    check(closed_by_server(idle), "the idle keep-alive connection is closed")
    code = server.proc.wait(timeout=15)
    check(code == 0, f"the process exits 0 (got {code})")
    check(time.monotonic() - t0 < 11, f"and within the grace period ({time.monotonic() - t0:.1f} s)")
    server.log.close()


def case_idle_connections(work):
    # Eight ready threads: the pool must grow for 500 idle connections and one more client.
    server = Server(work, "--threads", "8")
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
            check(status == 200, "a fresh client is answered with 500 idle connections open")
        best = min(times)
        check(best < 0.1, f"a fresh review is answered within 100 ms (best of 5: {best * 1000:.1f} ms)")
        check(server.request(conns[0], "POST", "/mutate", body)[0] == 200, "an idle connection still serves")
    finally:
        for s in conns:
            s.close()
        server.stop()


def case_keep_alive(work):
    server = Server(work, "--idle-timeout", "1s", "--threads", "4")
    conns = []
    try:
        body = fixture("kuberay-0.4-worker.json")
        s = server.connect()
        conns.append(s)
        for i in range(3):
            check(server.request(s, "POST", "/mutate", body)[0] == 200, f"request {i + 1} on one kept-alive connection")
        # Two requests in one write: the second is already read when the first is answered.
        head = (f"POST /mutate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode()
        s.sendall(head + body + head + body)
        first, second = read_response(s), read_response(s)
        check(first[0] == 200 and second[0] == 200, f"two pipelined requests are both answered ({first[0]}, {second[0]})")
        # Idle connections wait without a thread each (ConnectionLoop).
        ctx = server.context()
        for _ in range(200):
            conns.append(server.connect(ctx))
        check(server.request(conns[-1], "POST", "/mutate", body)[0] == 200, "the newest of 200 connections serves")
        with open(f"/proc/{server.proc.pid}/status") as f:
            threads = int(next(line.split()[1] for line in f if line.startswith("Threads:")))
        check(threads < 100, f"201 open connections need fewer than 100 threads (got {threads})")
        time.sleep(2.5)
        check(closed_by_server(s), "a connection idle for longer than --idle-timeout is closed")
        check(server.post("/mutate", body)[0] == 200, "a new connection is served after that")
    finally:
        for c in conns:
            c.close()
        server.stop()


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


def case_slowloris(work):
    # The deadline is --request-timeout plus --kube-api-timeout (2 s by default).
    server = Server(work, "--idle-timeout", "1s", "--request-timeout", "2s")
    try:
        slow = server.connect(timeout=20)
        slow.sendall(b"POST /mutate HTTP/1.1\r\n")
        cut = seconds_until_cut(slow, b"Host: localhost\r\nX-Slow: " + b"a" * 30)
        check(cut is not None and cut < 10, f"a one-byte-a-second client is cut off (after {cut} s)")
        # A TLS record header, then a ClientHello that never ends.
        raw = socket.create_connection(("127.0.0.1", server.port), timeout=20)
        cut = seconds_until_cut(raw, b"\x16\x03\x01\x02\x00\x01" + b"\x00" * 30)
        check(cut is not None and cut < 10, f"a one-byte-a-second handshake is cut off (after {cut} s)")
        raw.close()
        check(server.post("/mutate", fixture("kuberay-0.4-worker.json"))[0] == 200, "others are still served")
        text = server.get("/metrics")[2].decode()
        check((metric(text, "ray_webhook_connections_cut_total") or 0) >= 2, "the cuts are counted")
    finally:
        server.stop()


def case_limits(work):
    server = Server(work)
    try:
        with server.connect() as s:
            big = b" " * (7 * 1024 * 1024 + 1)
            status, headers, body = server.request(s, "POST", "/mutate", big, {"Connection": "close"})
        check(status == 413, f"a body over 7 MiB is 413 (got {status})")
        check(json.loads(body).get("reason") == "RequestEntityTooLarge", "413 has a JSON Status body")
        check(headers.get("content-type") == "application/json", f"413 says it is JSON (got {headers})")
        review = fixture("kuberay-0.4-worker.json")
        status, _, body = server.post("/mutate", review, headers={"Content-Type": "text/plain"})
        check(status == 415 and json.loads(body)["code"] == 415, f"text/plain is 415 (got {status})")
        status, headers, body = server.post("/mutate", review,
                                            headers={"Content-Type": "application/json; charset=utf-8"})
        check(status == 200, f"a charset parameter is fine (got {status})")
        # The answer is moved into the response, not copied (webhook_server.cpp, SetJsonBody): its
        # type and length must still be those of the AdmissionReview it carries.
        check(headers.get("content-type") == "application/json", f"the answer says it is JSON (got {headers})")
        check(int(headers.get("content-length", "-1")) == len(body) and
              json.loads(body)["response"]["uid"] == json.loads(review)["request"]["uid"],
              "the answer's Content-Length is its body's, an AdmissionReview for the request")
        with server.connect() as s:
            s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            status, _, _ = read_response(s)
        check(status == 415, f"a missing Content-Type is 415 (got {status})")
        deep = b'{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u","o":' + \
            b"[" * 100000 + b"]" * 100000 + b"}}"
        status, _, body = server.post("/validate", deep)
        check(status == 200 and json.loads(body)["response"]["allowed"] is True,
              f"100,000 levels of nesting in a field no rule reads are skipped, not recursed into (got {status})")
        try:
            with server.connect() as s:
                status, _, _ = server.request(s, "GET", "/healthz", headers={"X-Big": "a" * 100000})
        except (ConnectionError, ssl.SSLError, OSError):
            status = "closed"
        check(status != 200, f"a 100 KB header is refused (got {status})")
        check(server.post("/mutate", review)[0] == 200, "the server keeps serving after every refusal")
        check(server.proc.poll() is None, "the server is still running")
    finally:
        server.stop()


def case_metrics(work):
    server = Server(work)
    try:
        for _ in range(3):
            server.post("/mutate", fixture("kuberay-0.4-worker.json"))
        server.post("/validate", b"not json")
        server.post("/validate", fixture("dupmount-worker.json"))
        server.post("/validate", fixture("dup-env-warning.json"))
        server.post("/admit", fixture("kuberay-0.4-worker.json"))
        status, headers, body = server.get("/metrics")
        text = body.decode()
        check(status == 200 and headers.get("content-type", "").startswith("text/plain; version=0.0.4"),
              "/metrics is Prometheus text")
        expect = [
            ("controller_runtime_webhook_requests_total", {"webhook": "/mutate", "code": "200"}, 3),
            ("controller_runtime_webhook_requests_total", {"webhook": "/validate", "code": "400"}, 1),
            ("controller_runtime_webhook_requests_total", {"webhook": "/validate", "code": "200"}, 2),
            ("controller_runtime_webhook_latency_seconds_count", {"webhook": "/mutate"}, 3),
            ("controller_runtime_webhook_requests_in_flight", {"webhook": "/mutate"}, 0),
            # Each review adds FQ_RAY_IP to the Ray container and the init container.
            ("ray_webhook_mutations_total", {"kind": "fq_ray_ip_added"}, 8),
            ("ray_webhook_mutations_total", {"kind": "address_rewritten"}, 4),
            ("ray_webhook_denials_total", {"rule": "duplicate-mount"}, 1),
            ("ray_webhook_warnings_total", {}, 1),
            ("certwatcher_read_certificate_total", {}, 1),
            ("controller_runtime_webhook_requests_total", {"webhook": "/admit", "code": "200"}, 1),
            ("ray_webhook_serving_certificate_expiration_timestamp_seconds", {},
             not_after(os.path.join(work, "certs", "tls.crt"))),
        ]
        for name, labels, value in expect:
            got = metric(text, name, **labels)
            check(got == value, f"{name}{labels} == {value} (got {got})")
        check(metric(text, "controller_runtime_webhook_latency_seconds_bucket", webhook="/mutate", le="+Inf") == 3,
              "the latency histogram has buckets")
    finally:
        server.stop()


def case_client_ca(work):
    c = os.path.join(work, "certs")
    client = sign_with_ca(work, "client", "kube-apiserver", "extendedKeyUsage=clientAuth\n")
    server = Server(work, "--client-ca", f"{c}/ca.crt", client_cert=(f"{client}/tls.crt", f"{client}/tls.key"))
    try:
        check(server.post("/mutate", fixture("kuberay-0.4-worker.json"))[0] == 200,
              "a client certificate signed by --client-ca is accepted")
        refused = False
        try:
            server.post("/mutate", fixture("kuberay-0.4-worker.json"), ctx=ssl.create_default_context(cafile=server.ca))
        except (ssl.SSLError, ConnectionError, OSError):
            refused = True
        check(refused, "a handshake without a client certificate is refused")
        other = os.path.join(work, "other-ca")
        make_certs(other)
        stranger = ssl.create_default_context(cafile=server.ca)
        stranger.load_cert_chain(f"{other}/tls.crt", f"{other}/tls.key")
        refused = False
        try:
            server.post("/mutate", fixture("kuberay-0.4-worker.json"), ctx=stranger)
        except (ssl.SSLError, ConnectionError, OSError):
            refused = True
        check(refused, "a client certificate from another CA is refused")
    finally:
        server.stop()


def case_tls_versions(work):
    server = Server(work)
    try:
        def handshake(version):
            ctx = server.context()
            ctx.minimum_version = version
            ctx.maximum_version = version
            try:
                with server.connect(ctx):
                    return True
            except (ssl.SSLError, ConnectionError, OSError):
                return False
        check(handshake(ssl.TLSVersion.TLSv1_2), "TLS 1.2 is accepted by default")
        check(handshake(ssl.TLSVersion.TLSv1_3), "TLS 1.3 is accepted")
        ctx = server.context()
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        ctx.set_ciphers("AES128-SHA256")  # RSA key exchange, no forward secrecy
        try:
            with server.connect(ctx):
                weak = True
        except (ssl.SSLError, ConnectionError, OSError):
            weak = False
        check(not weak, "a cipher without ECDHE is refused")
    finally:
        server.stop()
    strict = Server(work, "--tls-min-version", "1.3")
    try:
        ctx = strict.context()
        ctx.maximum_version = ssl.TLSVersion.TLSv1_2
        try:
            with strict.connect(ctx):
                ok12 = True
        except (ssl.SSLError, ConnectionError, OSError):
            ok12 = False
        check(not ok12, "--tls-min-version 1.3 refuses TLS 1.2")
    finally:
        strict.stop()


def case_large_reviews(work):
    # A review far above the decoder's 64 KiB default grows one decoder; the
    # maintenance thread gives that back once it has sat idle (5 to 10 s).
    server = Server(work, "--log-level", "debug")
    try:
        review = json.loads(fixture("kuberay-1.0-worker-short.json"))
        review["request"]["object"]["metadata"]["annotations"]["example.com/padding"] = "x" * (2 * 1024 * 1024)
        large = json.dumps(review).encode()
        status, _, body = server.post("/mutate", large)
        check(status == 200 and json.loads(body)["response"]["allowed"] is True,
              f"a 2 MB review is answered (got {status})")
        check(server.logged("gave back the buffers of 1 idle decoder", within=15.0),
              "the decoder the large review grew is shrunk once idle")
        status, _, body = server.post("/mutate", large)
        check(status == 200 and "patch" in json.loads(body)["response"],
              f"a large review after the shrink is answered in full (got {status})")
        status, _, _ = server.post("/mutate", fixture("kuberay-1.0-worker-short.json"))
        check(status == 200, f"so is a small one (got {status})")
    finally:
        server.stop()





# ---- the edge under attack ----

def peak_rss_mb(server):
    """The server's peak resident set (VmHWM) in MB."""
    with open(f"/proc/{server.proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def review_ok(server):
    try:
        status, _, body = server.post("/mutate", fixture("kuberay-0.4-worker.json"))
        return status == 200 and b'"allowed":true' in body
    except OSError:
        return False


def hostile(server, kind, volume):
    """Sends one hostile request of `kind` on a fresh connection, up to `volume` bytes, as fast as the
    server takes them; returns the status the server answered with, or None when it only closed."""
    head = {
        "chunked": b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   b"Transfer-Encoding: chunked\r\n\r\n",
        "no-length": b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n",
        "long-line": b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Long: ",
        "many-lines": b"GET /healthz HTTP/1.1\r\nHost: x\r\n",
    }[kind]
    piece = {"chunked": b"10000\r\n" + b"a" * 0x10000 + b"\r\n", "no-length": b"a" * 65536,
             "long-line": b"a" * 65536, "many-lines": b"X-A: b\r\n" * 8192}[kind]
    s = server.connect(timeout=10)
    sent = 0
    try:
        s.sendall(head)
        while sent < volume:
            s.sendall(piece)
            sent += len(piece)
    except (OSError, ssl.SSLError):
        pass
    try:
        s.settimeout(5)
        status, _, _ = read_response(s)
        return status
    except (OSError, ssl.SSLError, ValueError, IndexError):
        return None
    finally:
        s.close()


def case_hostile_requests(work):
    server = Server(work)
    try:
        want = {"chunked": 411, "no-length": 411, "long-line": 431, "many-lines": 431}
        volume = {"chunked": 300 << 20, "no-length": 300 << 20, "long-line": 200 << 20, "many-lines": 16 << 20}
        for kind in want:
            status = hostile(server, kind, volume[kind])
            check(status in (want[kind], None), f"{kind}: answered {want[kind]} or closed (got {status})")
            check(status is not None, f"{kind}: the refusal reached the client before the close (got {status})")
            rss = peak_rss_mb(server)
            check(rss < 64, f"{kind}: peak RSS {rss:.1f} MB stays under 64 MB")
            check(review_ok(server), f"{kind}: the next review is answered")
        # 64 at once, 16 of each kind, each sending up to 32 MiB.
        threads = [threading.Thread(target=hostile, args=(server, kind, 32 << 20)) for kind in want for _ in range(16)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        check(review_ok(server), "a review is answered while 64 hostile requests run")
        for t in threads:
            t.join(timeout=60)
        rss = peak_rss_mb(server)
        check(rss < 64, f"64 hostile requests at once: peak RSS {rss:.1f} MB stays under 64 MB")
        check(review_ok(server), "64 hostile requests at once: the next review is answered")
        # A declared length over the limit is refused before any of the body is read.
        with server.connect() as s:
            s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 8000000\r\n\r\n")
            status, headers, _ = read_response(s)
            check(status == 413 and headers.get("connection") == "close", f"8 MB announced: 413 and close ({status})")
            check(closed_by_server(s), "and the connection is closed")
        with server.connect() as s:
            s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Encoding: gzip\r\nContent-Length: 10\r\n\r\n0123456789")
            check(read_response(s)[0] == 415, "Content-Encoding on a request is 415")
        check(server.proc.poll() is None, "the server is still running")
    finally:
        server.stop()


def case_no_compression(work):
    server = Server(work)
    try:
        gzip_please = {"Accept-Encoding": "gzip, deflate, br"}
        status, headers, body = server.post("/mutate", fixture("kuberay-0.4-worker.json"), headers=gzip_please)
        check(status == 200 and "content-encoding" not in headers and body.startswith(b"{"),
              f"a review's answer is not compressed (got {status}, {headers.get('content-encoding')})")
        status, headers, body = server.post("/mutate", b"not json", headers=gzip_please)
        check(status == 400 and "content-encoding" not in headers and body.startswith(b"{"),
              "an error's answer is not compressed")
        with server.connect() as s:
            status, headers, body = server.request(s, "GET", "/metrics", headers=gzip_please)
        check(status == 200 and "content-encoding" not in headers and body.startswith(b"#"),
              "/metrics is not compressed")
    finally:
        server.stop()


def case_direct_reviews(work):
    # A path that is /mutate only once percent-decoded is routed as /mutate
    # (src/edge/route.cpp), and both answers come from the one answer writer,
    # so the two can be compared byte for byte.
    server = Server(work, "--idle-timeout", "7s")
    try:
        def send(sock, target, body=b"", extra=""):
            sock.sendall((f"POST {target} HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                          f"{extra}Content-Length: {len(body)}\r\n\r\n").encode() + body)
            return raw_response(sock)

        with server.connect() as s:
            routed, direct = send(s, "/mut%61te"), send(s, "/mutate")
        check(routed.startswith(b"HTTP/1.1 400 ") and routed == direct,
              f"an empty review is answered byte for byte as on its percent-encoded path ({direct[:200]!r} against {routed[:200]!r})")
        with server.connect() as s:
            routed_close = send(s, "/mut%61te", extra="Connection: close\r\n")
        with server.connect() as s:
            direct_close = send(s, "/validate", extra="Connection: close\r\n")
            closed = closed_by_server(s)
        check(direct_close == routed_close and b"\r\nConnection: close\r\n" in direct_close and closed,
              "with Connection: close too, and the connection is closed")
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
        check(lines(ok)[0] == b"HTTP/1.1 200 OK" and shape == routed_shape and b"Keep-Alive: timeout=7, max=100000" in shape,
              f"a review's answer has the routed answer's headers in their order ({lines(ok)!r} against {lines(routed)!r})")
        check(all(p == ok for p in pipelined),
              "reviews pipelined behind one another get the same answer (the next request sits where the parser may read past the body)")
    finally:
        server.stop()


def p99_ms(samples):
    ordered = sorted(samples)
    return ordered[max(0, int(len(ordered) * 0.99) - 1)] * 1000


def fresh_reviews(server, n):
    """n reviews, each on a new TLS connection; their times in seconds."""
    body = fixture("kuberay-0.4-worker.json")
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        status, _, _ = server.post("/mutate", body)
        times.append(time.perf_counter() - t0)
        if status != 200:
            times[-1] = float("inf")
    return times


def case_stalled_clients(work):
    server = Server(work, "--max-connections", "4096", "--request-timeout", "3s")
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
        check(p99 < 50, f"with 2,000 stalled connections a fresh review's p99 is under 50 ms (got {p99:.1f} ms)")
        time.sleep(4)
        with server.connect() as s:
            text = server.request(s, "GET", "/metrics")[2].decode()
        cut = metric(text, "ray_webhook_connections_cut_total") or 0
        check(cut >= 2000, f"--request-timeout cut the stalled handshakes and requests ({cut:.0f} of 2000)")
        check(closed_by_server(held[0], 1) and closed_by_server(held[-1], 1), "and they are closed")
    finally:
        for h in held:
            h.close()
        server.stop()


def case_file_limit(work):
    import resource
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    if hard < 8192:
        check(False, f"this machine's hard open-file limit {hard} is too low for the test")
        return
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 16384), hard))
    soft_1024 = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (1024, hard))  # noqa: E731
    server = Server(work, preexec=soft_1024)
    silent = []
    try:
        with open(f"/proc/{server.proc.pid}/limits") as f:
            line = next(l for l in f if l.startswith("Max open files"))
        check(int(line.split()[3]) == hard, f"the soft open-file limit is raised to the hard one ({line.strip()})")
        for _ in range(3000):
            silent.append(socket.create_connection(("127.0.0.1", server.port), timeout=5))
        time.sleep(0.5)
        t0 = time.monotonic()
        ok = review_ok(server)
        took = time.monotonic() - t0
        print(f"file_limit: a fresh review took {took:.3f} s with 3,000 silent connections")
        check(ok and took < 1, f"with 3,000 silent connections a fresh review is answered within 1 s ({took:.2f} s)")
        shed = opened = 0
        for _ in range(40):  # the metrics are exported every 250 ms
            with server.connect() as s:
                text = server.request(s, "GET", "/metrics")[2].decode()
            shed = metric(text, "ray_webhook_connections_shed_total") or 0
            opened = metric(text, "ray_webhook_connections_open") or 0
            if shed >= 952:
                break
            time.sleep(0.25)
        check(shed >= 952, f"connections beyond --max-connections closed the oldest idle ones ({shed:.0f} of 952)")
        check(opened <= 2048, f"at most --max-connections are open ({opened:.0f})")
    finally:
        for s in silent:
            s.close()
        server.stop()


def case_pipelining(work):
    server = Server(work)
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
        check(answered[0] > 0, "the pipelining client is served too")
        check(p99 < 10, f"a client pipelining without pause delays another's review by a few ms at most (p99 {p99:.1f} ms)")
    finally:
        stop.set()
        flooder.join(timeout=10)
        server.stop()


def case_expect_continue(work):
    server = Server(work)
    body = fixture("kuberay-0.4-worker.json")
    try:
        with server.connect() as s:
            s.sendall((f"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                       f"Expect: 100-continue\r\nContent-Length: {len(body)}\r\n\r\n").encode())
            s.settimeout(5)
            first = s.recv(100)
            check(first == b"HTTP/1.1 100 Continue\r\n\r\n", f"100 Continue for a request that passes ({first!r})")
            s.sendall(body)
            check(read_response(s)[0] == 200, "then the review's answer")
        with server.connect() as s:
            smuggled = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
            s.sendall(b"POST /mutate HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nExpect: 100-continue\r\n"
                      + f"Content-Length: {len(smuggled)}\r\n\r\n".encode())
            status, headers, _ = read_response(s)
            check(status == 415 and headers.get("connection") == "close", f"a refused request gets no 100 ({status})")
            try:
                s.sendall(smuggled)  # its body, sent anyway, must never be answered as a request
                rest = s.recv(4096)
            except (OSError, ssl.SSLError):
                rest = b""
            check(rest == b"", f"nothing inside the body is answered ({rest[:40]!r})")
    finally:
        server.stop()


def case_shutdown_under_load(work):
    server = Server(work, "--drain-delay", "1s", "--shutdown-grace", "10s")
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
    check(stats["sent"] > 100, f"the clients sent at full speed ({stats['sent']} requests)")
    check(stats["lost"] == 0, f"no request was lost across SIGTERM ({stats['lost']} lost)")
    check(stats["answered"] == stats["sent"], "every request sent was answered 200")
    check(stats["kept_alive_after"] == 0, f"after SIGTERM every answer carries Connection: close "
          f"({stats['kept_alive_after']} did not)")
    check(code == 0, f"the process exits 0 (got {code})")
    server.log.close()


def case_probes_with_mtls(work):
    c = os.path.join(work, "certs")
    client = sign_with_ca(work, "client", "kube-apiserver", "extendedKeyUsage=clientAuth\n")
    server = Server(work, "--client-ca", f"{c}/ca.crt", client_cert=(f"{client}/tls.crt", f"{client}/tls.key"))
    try:
        def plain(path, method="GET"):
            with socket.create_connection(("127.0.0.1", server.probe_port), timeout=5) as s:
                s.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
                return read_response(s)[0]
        check(plain("/healthz") == 200, "the probe port serves /healthz over plain HTTP, no certificate")
        check(plain("/readyz") == 200, "and /readyz")
        check(plain("/metrics") == 404 and plain("/mutate", "POST") in (404, 411),
              "and nothing else: no reviews, no metrics")
        refused = False
        try:
            server.post("/mutate", fixture("kuberay-0.4-worker.json"), ctx=ssl.create_default_context(cafile=server.ca))
        except (ssl.SSLError, ConnectionError, OSError):
            refused = True
        check(refused, "the webhook port still requires a client certificate")
        ctx = server.context(maximum_version=ssl.TLSVersion.TLSv1_2)
        with server.connect(ctx) as s:
            server.request(s, "GET", "/healthz")
            session = s.session
        raw = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        with ctx.wrap_socket(raw, server_hostname="localhost", session=session) as s:
            check(s.session_reused, "a TLS 1.2 session is resumed with --client-ca (session id context set)")
    finally:
        server.stop()


def start_mock(work, *extra):
    port = free_port()
    out = open(os.path.join(work, f"mock-{port}.out"), "w")
    proc = subprocess.Popen([ARGS.mock_kube_api, "--port", str(port), "--tls-cert", f"{work}/certs/tls.crt",
                             "--tls-key", f"{work}/certs/tls.key", "--token", "mock-token",
                             "--pods", os.path.join(ARGS.fixtures, "kube-api", "pods.json"), *extra],
                            stdout=out, stderr=out)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and "listening" not in open(out.name).read():
        time.sleep(0.05)
    return proc, port


def head_review(cluster):
    review = json.loads(fixture("head-already-named.json"))
    review["request"]["uid"] = f"lookup-{cluster}"
    review["request"]["name"] = review["request"]["object"]["metadata"]["name"] = f"{cluster}-head"
    review["request"]["object"]["metadata"]["labels"]["ray.io/cluster"] = cluster
    return json.dumps(review).encode()


def server_with_mock_api(work, *flags):
    """The mock Kubernetes API and a server that reaches it with its token: (server, mock)."""
    token = os.path.join(work, "token")
    with open(token, "w") as f:
        f.write("mock-token")
    mock, port = start_mock(work)
    server = Server(work, "--kube-api-server", f"https://127.0.0.1:{port}", "--kube-ca-file",
                    f"{work}/certs/ca.crt", "--kube-token-file", token, *flags)
    return server, mock


def case_lookup_deadline(work):
    server, mock = server_with_mock_api(work, "--kube-api-timeout", "20s")
    try:
        status, _, body = server.post("/validate", head_review("live-head"))
        check(status == 200 and json.loads(body)["response"]["allowed"] is False, "the lookup reaches the mock API")
        # The API answers one byte every 250 ms: no read ever waits long, the call never ends.
        t0 = time.monotonic()
        status, _, body = server.post("/validate?timeout=2s", head_review("trickle-head"))
        took = time.monotonic() - t0
        answer = json.loads(body)["response"] if status == 200 else {}
        check(took < 2, f"a trickling API cannot hold a review past kube-apiserver's ?timeout=2s ({took:.2f} s)")
        check(took > 1.2, f"the lookup had the time the API server gives it ({took:.2f} s)")
        check(answer.get("allowed") is True and answer.get("warnings"),
              f"when the deadline passes, --head-lookup-failure (allow) decides, with a warning ({answer})")
    finally:
        server.stop()
        mock.terminate()
        mock.wait(timeout=10)


def case_ipv6_api(work):
    token = os.path.join(work, "token")
    with open(token, "w") as f:
        f.write("mock-token")
    # cpp-httplib 0.11's URL pattern takes no hex letters in a bracketed host: ::ffff:7f00:1 is
    # 127.0.0.1 reached over IPv6 (an IPv4-mapped address), so the mock serves a certificate naming it.
    mock_certs = sign_with_ca(work, "mock", "mock-kube-api",
                              "subjectAltName=IP:::1,IP:::ffff:7f00:1\nextendedKeyUsage=serverAuth\n")
    for bind, url_host in (("::1", "[::1]"), ("127.0.0.1", "[::ffff:7f00:1]")):
        mock, port = start_mock(work, "--bind", bind, "--tls-cert", f"{mock_certs}/tls.crt",
                                "--tls-key", f"{mock_certs}/tls.key")
        server = Server(work, "--kube-api-server", f"https://{url_host}:{port}", "--kube-ca-file",
                        f"{work}/certs/ca.crt", "--kube-token-file", token)
        try:
            status, _, body = server.post("/validate", head_review("live-head"))
            answer = json.loads(body)["response"] if status == 200 else {}
            check(answer.get("allowed") is False and answer.get("status", {}).get("code") == 409,
                  f"--kube-api-server https://{url_host}:PORT reaches the API: a second head is denied ({answer})")
        finally:
            server.stop()
            mock.terminate()
            mock.wait(timeout=10)


REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def promql_metric_names(expr):
    """The metric names a PromQL expression selects: identifiers right before a {...} selector."""
    return set(re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{", expr))


def case_monitoring(work):
    """The chart's dashboard and alerting rules name only metrics the server exports."""
    server, mock = server_with_mock_api(work, "--audit-interval", "1s")
    try:
        text = server.get("/metrics")[2].decode()
        families = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
        # A histogram's series are NAME_bucket, NAME_sum and NAME_count.
        exported = set(families) | {f"{n}_{s}" for n, t in families.items() if t == "histogram"
                                    for s in ("bucket", "sum", "count")}
        with open(os.path.join(REPO, "charts", "ray-webhook", "files", "dashboard.json")) as f:
            dashboard = json.load(f)
        exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
        named = set().union(*(promql_metric_names(e) for e in exprs))
        check(len(exprs) >= 10 and len(named) >= 10, f"the dashboard has {len(exprs)} queries over {len(named)} metrics")
        check(named <= exported, f"every dashboard query names an exported metric (not: {sorted(named - exported)})")
        with open(os.path.join(REPO, "charts", "ray-webhook", "files", "alerts.rules.yaml")) as f:
            rules = f.read()
        ours = {n for n in promql_metric_names(rules) if n.startswith(("ray_webhook_", "controller_runtime_", "certwatcher_"))}
        check(len(ours) >= 5 and ours <= exported,
              f"the alerting rules name {len(ours)} of ray-webhook's metrics, all exported (not: {sorted(ours - exported)})")
        check("ray_webhook_serving_certificate_expiration_timestamp_seconds" in families and "ray_webhook_audit_findings" in families,
              "the certificate's expiration and the audit's gauges are exported")
    finally:
        server.stop()
        mock.terminate()
        mock.wait(timeout=10)


def rsa_leaf(workdir, name):
    out = os.path.join(workdir, name)
    os.makedirs(out)
    c = os.path.join(workdir, "certs")
    subprocess.run(["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{out}/tls.key",
                    "-subj", "/CN=rsa", "-out", f"{out}/tls.csr"], check=True, stderr=subprocess.DEVNULL)
    with open(f"{out}/ext", "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")
    subprocess.run(["openssl", "x509", "-req", "-in", f"{out}/tls.csr", "-CA", f"{c}/ca.crt", "-CAkey", f"{c}/ca.key",
                    "-CAcreateserial", "-days", "2", "-extfile", f"{out}/ext", "-out", f"{out}/tls.crt"],
                   check=True, stderr=subprocess.DEVNULL)
    return out


def case_cert_key_type(work):
    volume = os.path.join(work, "volume")
    os.makedirs(volume)
    secret_volume_write(volume, os.path.join(work, "certs"))
    server = Server(work, "--cert-reload-interval", "100ms", cert_flags=["--cert-dir", volume])
    try:
        def served_key_types():
            """The key type served to a client that prefers ECDSA, and to one that takes RSA only."""
            types = []
            for sigalgs in ("ECDSA+SHA256:RSA-PSS+SHA256:RSA+SHA256", "RSA-PSS+SHA256:RSA+SHA256"):
                ctx = server.context(maximum_version=ssl.TLSVersion.TLSv1_2)
                ctx.set_ciphers("ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256")
                if "ECDSA" not in sigalgs:
                    ctx.set_ciphers("ECDHE-RSA-AES128-GCM-SHA256")
                try:
                    with server.connect(ctx) as s:
                        der = s.getpeercert(binary_form=True)
                    text = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-text"], input=der,
                                          capture_output=True, check=True).stdout.decode()
                    types.append("rsa" if "rsaEncryption" in text else "ec")
                except (ssl.SSLError, OSError):
                    types.append("none")
            return types
        check(served_key_types() == ["ec", "none"], f"an ECDSA pair is served alone ({served_key_types()})")
        secret_volume_write(volume, rsa_leaf(work, "rsa"))
        time.sleep(1)
        got = served_key_types()
        check(got == ["rsa", "rsa"], f"after a reload to RSA only the RSA pair is served ({got})")
        secret_volume_write(volume, new_leaf(work, "ec-again"))
        time.sleep(1)
        got = served_key_types()
        check(got == ["ec", "none"], f"after a reload back to ECDSA only the new ECDSA pair is served ({got})")
    finally:
        server.stop()

def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--certs", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("--mock-kube-api")
    cases = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}
    parser.add_argument("case", choices=sorted(cases))
    ARGS = parser.parse_args()
    work = tempfile.mkdtemp(prefix="ray-webhook-test-")
    try:
        make_certs(os.path.join(work, "certs"))
        cases[ARGS.case](work)
    except Exception as e:  # noqa: BLE001 - report, never hang
        check(False, f"{ARGS.case} raised {e!r}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{ARGS.case}: {RESULTS['passed']} passed, {RESULTS['failed']} failed")
    sys.exit(1 if RESULTS["failed"] else 0)


if __name__ == "__main__":
    main()
