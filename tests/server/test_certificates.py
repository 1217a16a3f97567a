"""The serving certificate: reloads from a Secret volume under load, refused pairs, ECDSA and RSA
pairs, and client certificates with --client-ca."""
import os
import shutil
import ssl
import subprocess
import threading
import time

from server_harness import fixture, make_certs, metric, not_after, sign_with_ca


def peer_serial(server):
    with server.connect() as s:
        der = s.getpeercert(binary_form=True)
    out = subprocess.run(["openssl", "x509", "-inform", "DER", "-noout", "-serial"], input=der,
                         capture_output=True, check=True)
    return out.stdout.decode().strip()


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


def secret_volume(work):
    """A Secret volume holding the test's serving pair; its folder."""
    volume = os.path.join(work, "volume")
    os.makedirs(volume)
    secret_volume_write(volume, os.path.join(work, "certs"))
    return volume


def new_leaf(workdir, name):
    """A second serving pair from the same CA (a cert-manager renewal)."""
    return sign_with_ca(workdir, name, "renewed", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n")


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


def test_cert_rotation(work, start_server):
    volume = secret_volume(work)
    server = start_server("--cert-reload-interval", "500ms", cert_flags=["--cert-dir", volume])
    before = peer_serial(server)
    loop = Loop(server, fixture("kuberay-0.4-worker.json"))
    loop.start()
    try:
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
    finally:
        loop.stop()
    assert seen == want, f"new connections use the renewed certificate within 10 s (serial {seen}, want {want})"
    assert before != want, "the renewed certificate differs from the first"
    assert loop.failed == 0 and loop.ok > 10, \
        f"no request failed across the swap ({loop.ok} ok, {loop.failed} failed: {loop.errors[:3]})"
    text = server.get("/metrics")[2].decode()
    assert (metric(text, "certwatcher_read_certificate_total") or 0) >= 2, "certificate reads are counted"
    expiry = metric(text, "ray_webhook_serving_certificate_expiration_timestamp_seconds")
    assert expiry == not_after(f"{renewed}/tls.crt"), \
        f"the expiration gauge is the renewed certificate's notAfter ({expiry})"
    assert server.logged("serving certificate loaded"), "the reload is logged"


def test_cert_rejected(work, start_server):
    volume = secret_volume(work)
    server = start_server("--cert-reload-interval", "300ms", cert_flags=["--cert-dir", volume])
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
    assert peer_serial(server) == before, "a pair that does not load leaves the old one in service"
    assert server.post("/mutate", fixture("kuberay-0.4-worker.json"))[0] == 200, "requests still succeed"
    assert server.logged("no PEM certificate"), "the half-written certificate is logged"
    assert server.logged("does not match"), "the mismatched key is logged"
    text = server.get("/metrics")[2].decode()
    assert (metric(text, "certwatcher_read_certificate_errors_total") or 0) >= 2, "reload errors are counted"


def test_client_ca(work, client_cert, start_server):
    server = start_server("--client-ca", f"{work}/certs/ca.crt", client_cert=client_cert)
    assert server.post("/mutate", fixture("kuberay-0.4-worker.json"))[0] == 200, \
        "a client certificate signed by --client-ca is accepted"
    refused = False
    try:
        server.post("/mutate", fixture("kuberay-0.4-worker.json"), ctx=ssl.create_default_context(cafile=server.ca))
    except (ssl.SSLError, ConnectionError, OSError):
        refused = True
    assert refused, "a handshake without a client certificate is refused"
    other = os.path.join(work, "other-ca")
    make_certs(other)
    stranger = ssl.create_default_context(cafile=server.ca)
    stranger.load_cert_chain(f"{other}/tls.crt", f"{other}/tls.key")
    refused = False
    try:
        server.post("/mutate", fixture("kuberay-0.4-worker.json"), ctx=stranger)
    except (ssl.SSLError, ConnectionError, OSError):
        refused = True
    assert refused, "a client certificate from another CA is refused"


def test_cert_key_type(work, start_server):
    volume = secret_volume(work)
    server = start_server("--cert-reload-interval", "100ms", cert_flags=["--cert-dir", volume])

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

    got = served_key_types()
    assert got == ["ec", "none"], f"an ECDSA pair is served alone ({got})"
    secret_volume_write(volume, rsa_leaf(work, "rsa"))
    time.sleep(1)
    got = served_key_types()
    assert got == ["rsa", "rsa"], f"after a reload to RSA only the RSA pair is served ({got})"
    secret_volume_write(volume, new_leaf(work, "ec-again"))
    time.sleep(1)
    got = served_key_types()
    assert got == ["ec", "none"], f"after a reload back to ECDSA only the new ECDSA pair is served ({got})"
