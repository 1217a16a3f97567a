"""What every module of tests/server shares: the command line naming the built
server, its certificate script, the fixtures and the mock Kubernetes API; a
fresh folder of certificates per test; and starters for server and mock
processes that stop whatever a test started, however the test ended.

  python3 -m pytest tests/server/test_certificates.py --server BIN --certs GENERATE_SH \
      --fixtures-dir DIR --mock-kube-api BIN

Each test starts its own servers on free loopback ports (server_harness.free_port),
so a module's tests, and modules run side by side, share no process or port.
"""
import argparse
import os
import shutil
import subprocess
import tempfile
import time

import pytest

import server_harness as h


def pytest_addoption(parser):
    group = parser.getgroup("ray-webhook", "the real server under stress (tests/server)")
    group.addoption("--server", help="the ray-webhook binary (required)")
    group.addoption("--certs", help="certs/generate.sh, which makes a throw-away CA and serving pair (required)")
    # Not --fixtures, as the other test drivers spell it: pytest's own --fixtures lists fixtures.
    group.addoption("--fixtures-dir", help="tests/fixtures (required)")
    group.addoption("--mock-kube-api", help="the mock-kube-api binary (for the lookup and the monitoring tests)")


def pytest_configure(config):
    # Required here rather than by argparse, so `pytest --help` still works without them.
    if config.option.help or config.option.version:
        return
    missing = [o for o in ("--server", "--certs", "--fixtures-dir") if not config.getoption(o)]
    if missing:
        raise pytest.UsageError(f"tests/server needs {', '.join(missing)}")
    h.ARGS = argparse.Namespace(server=config.getoption("--server"), certs=config.getoption("--certs"),
                                fixtures=config.getoption("--fixtures-dir"),
                                mock_kube_api=config.getoption("--mock-kube-api"))


@pytest.fixture
def work():
    """A fresh folder whose certs/ holds a throw-away CA (ca.crt, ca.key) and a serving pair for
    localhost and 127.0.0.1 (tls.crt, tls.key); the server logs go beside it. Removed afterwards."""
    path = tempfile.mkdtemp(prefix="ray-webhook-test-")
    try:
        h.make_certs(os.path.join(path, "certs"))
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def client_cert(work):
    """A client certificate as kube-apiserver presents one, signed by the test CA: (cert, key)."""
    client = h.sign_with_ca(work, "client", "kube-apiserver", "extendedKeyUsage=clientAuth\n")
    return f"{client}/tls.crt", f"{client}/tls.key"


@pytest.fixture
def start_server(work):
    """start_server(*flags, cert_flags=, client_cert=, preexec=): a running server_harness.Server serving
    the test's certificates (or cert_flags); each is stopped (SIGTERM, then waited for) after the test."""
    servers = []

    def start(*flags, **kw):
        server = h.Server(work, *flags, **kw)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def start_mock(work):
    """start_mock(*extra): mock-kube-api on a free port with the test's serving pair, token
    mock-token and the fixture pods; returns (process, port). Terminated after the test."""
    binary = h.ARGS.mock_kube_api
    if not binary:
        pytest.fail("this test needs --mock-kube-api")
    started = []

    def start(*extra):
        port = h.free_port()
        out = open(os.path.join(work, f"mock-{port}.out"), "w")
        proc = subprocess.Popen([binary, "--port", str(port), "--tls-cert", f"{work}/certs/tls.crt",
                                 "--tls-key", f"{work}/certs/tls.key", "--token", "mock-token",
                                 "--pods", os.path.join(h.ARGS.fixtures, "kube-api", "pods.json"), *extra],
                                stdout=out, stderr=out)
        started.append((proc, out))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "listening" not in open(out.name).read():
            time.sleep(0.05)
        return proc, port

    yield start
    for proc, out in started:
        proc.terminate()
        proc.wait(timeout=10)
        out.close()


@pytest.fixture
def kube_token(work):
    """The file holding the token the mock API accepts, as --kube-token-file reads it."""
    token = os.path.join(work, "token")
    with open(token, "w") as f:
        f.write("mock-token")
    return token


@pytest.fixture
def server_with_mock_api(work, kube_token, start_mock, start_server):
    """server_with_mock_api(*flags): the mock Kubernetes API and a server that reaches it with its
    token, as (server, mock process). (start_mock comes before start_server above, so the servers
    stop before the mock they call.)"""
    def start(*flags):
        mock, port = start_mock()
        server = start_server("--kube-api-server", f"https://127.0.0.1:{port}", "--kube-ca-file",
                              f"{work}/certs/ca.crt", "--kube-token-file", kube_token, *flags)
        return server, mock

    return start
