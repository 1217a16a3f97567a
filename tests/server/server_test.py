#!/usr/bin/env python3
"""Behaviour of the real ray-webhook server under operational stress.

Each case starts `ray-webhook serve` with a throw-away certificate on a free
loopback port, drives it with Python's ssl module, and stops it. Cases:
cert_rotation, cert_rejected, sigterm_drain, idle_connections, slowloris,
limits, metrics, client_ca, tls_versions.

  server_test.py --server BIN --certs GENERATE_SH --fixtures DIR CASE

Timing thresholds are generous on purpose: they check behaviour, not speed.
Prints "N passed, M failed" and exits 1 on any failure.
"""
import argparse
import json
import os
import re
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

    def __init__(self, workdir, *flags, cert_flags=None, client_cert=None):
        self.client_cert = client_cert  # (cert, key) every connection presents, if set
        self.port = free_port()
        self.log_path = os.path.join(workdir, f"server-{self.port}.log")
        certs = cert_flags or ["--tls-cert", f"{workdir}/certs/tls.crt", "--tls-key", f"{workdir}/certs/tls.key"]
        self.probe_port = free_port()
        cmd = [ARGS.server, "serve", "--bind", "127.0.0.1", "--port", str(self.port),
               "--probe-port", str(self.probe_port), *certs, *flags]
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)
        self.ca = f"{workdir}/certs/ca.crt"
        deadline = time.time() + 10
        while time.time() < deadline:
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
        deadline = time.time() + within
        while text not in self.log_text():
            if time.time() >= deadline:
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


def read_response(sock):
    """Reads one HTTP/1.1 response with Content-Length; returns (status, headers, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("connection closed before a response")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    return status, headers, rest[:length]


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
        deadline = time.time() + 10
        seen = before
        while time.time() < deadline and seen != want:
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
    t0 = time.time()
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
    check(time.time() - t0 < 11, f"and within the grace period ({time.time() - t0:.1f} s)")
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
    start = time.time()
    for ch in data:
        try:
            sock.sendall(bytes([ch]))
        except (OSError, ssl.SSLError):
            return time.time() - start
        time.sleep(1)
        # A closed socket shows up as a readable EOF before a failed send.
        sock.setblocking(False)
        try:
            if sock.recv(1) == b"":
                return time.time() - start
        except (ssl.SSLWantReadError, BlockingIOError):
            pass
        except (OSError, ssl.SSLError):
            return time.time() - start
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
            ("ray_webhook_mutations_total", {"kind": "fq_ray_ip_added"}, 6),
            ("ray_webhook_mutations_total", {"kind": "address_rewritten"}, 3),
            ("ray_webhook_denials_total", {"rule": "duplicate-mount"}, 1),
            ("ray_webhook_warnings_total", {}, 1),
            ("certwatcher_read_certificate_total", {}, 1),
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


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    global ARGS
    parser = argparse.ArgumentParser()
    parser.add_argument("--server", required=True)
    parser.add_argument("--certs", required=True)
    parser.add_argument("--fixtures", required=True)
    parser.add_argument("case", choices=sorted(CASES))
    ARGS = parser.parse_args()
    work = tempfile.mkdtemp(prefix="ray-webhook-test-")
    try:
        make_certs(os.path.join(work, "certs"))
        CASES[ARGS.case](work)
    except Exception as e:  # noqa: BLE001 - report, never hang
        check(False, f"{ARGS.case} raised {e!r}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{ARGS.case}: {RESULTS['passed']} passed, {RESULTS['failed']} failed")
    sys.exit(1 if RESULTS["failed"] else 0)


if __name__ == "__main__":
    main()
