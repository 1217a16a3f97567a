"""The client side of tests/server's modules, and of bench/attack.py's attacks.

`Server` runs `ray-webhook serve` with a throw-away certificate on a free
loopback port, and speaks HTTP/1.1 to it through Python's ssl module; the rest
are the readers, the certificate makers and the hostile clients the modules
share. Both users fill in ARGS first (tests/server/conftest.py from pytest's
command line, bench/attack.py from its own): `server`, `certs`, `fixtures`.

Timing thresholds are generous on purpose: they check behaviour, not speed.
"""
import datetime
import os
import re
import signal
import socket
import ssl
import subprocess
import time

ARGS = None


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
                self.log.close()
                raise RuntimeError(f"server exited: {open(self.log_path).read()}")
            try:
                if self.get("/healthz")[0] == 200:
                    return
            except OSError:
                time.sleep(0.05)
        # Several tests run in one process: a server that never came up must not outlive its test.
        self.proc.kill()
        self.proc.wait()
        self.log.close()
        raise RuntimeError(f"server did not start: {open(self.log_path).read()}")

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
        if not self.log.closed:
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
        """SIGTERM and wait; safe to call again, and after the test stopped the process itself."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
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
