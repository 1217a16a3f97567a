"""TLS versions and ciphers, and the plain-HTTP probe port beside a webhook port that requires
client certificates."""
import socket
import ssl

from server_harness import fixture, read_response


def test_tls_versions(start_server):
    server = start_server()

    def handshake(version):
        ctx = server.context()
        ctx.minimum_version = version
        ctx.maximum_version = version
        try:
            with server.connect(ctx):
                return True
        except (ssl.SSLError, ConnectionError, OSError):
            return False

    assert handshake(ssl.TLSVersion.TLSv1_2), "TLS 1.2 is accepted by default"
    assert handshake(ssl.TLSVersion.TLSv1_3), "TLS 1.3 is accepted"
    ctx = server.context()
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers("AES128-SHA256")  # RSA key exchange, no forward secrecy
    try:
        with server.connect(ctx):
            weak = True
    except (ssl.SSLError, ConnectionError, OSError):
        weak = False
    assert not weak, "a cipher without ECDHE is refused"
    server.stop()
    strict = start_server("--tls-min-version", "1.3")
    ctx = strict.context()
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    try:
        with strict.connect(ctx):
            ok12 = True
    except (ssl.SSLError, ConnectionError, OSError):
        ok12 = False
    assert not ok12, "--tls-min-version 1.3 refuses TLS 1.2"


def test_probes_with_mtls(work, client_cert, start_server):
    server = start_server("--client-ca", f"{work}/certs/ca.crt", client_cert=client_cert)

    def plain(path, method="GET"):
        with socket.create_connection(("127.0.0.1", server.probe_port), timeout=5) as s:
            s.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
            return read_response(s)[0]

    assert plain("/healthz") == 200, "the probe port serves /healthz over plain HTTP, no certificate"
    assert plain("/readyz") == 200, "and /readyz"
    assert plain("/metrics") == 404 and plain("/mutate", "POST") in (404, 411), \
        "and nothing else: no reviews, no metrics"
    refused = False
    try:
        server.post("/mutate", fixture("kuberay-0.4-worker.json"), ctx=ssl.create_default_context(cafile=server.ca))
    except (ssl.SSLError, ConnectionError, OSError):
        refused = True
    assert refused, "the webhook port still requires a client certificate"
    ctx = server.context(maximum_version=ssl.TLSVersion.TLSv1_2)
    with server.connect(ctx) as s:
        server.request(s, "GET", "/healthz")
        session = s.session
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    with ctx.wrap_socket(raw, server_hostname="localhost", session=session) as s:
        assert s.session_reused, "a TLS 1.2 session is resumed with --client-ca (session id context set)"
