"""The second-head lookup against the mock Kubernetes API: kube-apiserver's deadline holds against
a trickling API, and the API is reached at IPv6 addresses."""
import json
import time

from server_harness import fixture, sign_with_ca


def head_review(cluster):
    review = json.loads(fixture("head-already-named.json"))
    review["request"]["uid"] = f"lookup-{cluster}"
    review["request"]["name"] = review["request"]["object"]["metadata"]["name"] = f"{cluster}-head"
    review["request"]["object"]["metadata"]["labels"]["ray.io/cluster"] = cluster
    return json.dumps(review).encode()


def test_lookup_deadline(server_with_mock_api):
    server, _ = server_with_mock_api("--kube-api-timeout", "20s")
    status, _, body = server.post("/validate", head_review("live-head"))
    assert status == 200 and json.loads(body)["response"]["allowed"] is False, "the lookup reaches the mock API"
    # The API answers one byte every 250 ms: no read ever waits long, the call never ends.
    t0 = time.monotonic()
    status, _, body = server.post("/validate?timeout=2s", head_review("trickle-head"))
    took = time.monotonic() - t0
    answer = json.loads(body)["response"] if status == 200 else {}
    assert took < 2, f"a trickling API cannot hold a review past kube-apiserver's ?timeout=2s ({took:.2f} s)"
    assert took > 1.2, f"the lookup had the time the API server gives it ({took:.2f} s)"
    assert answer.get("allowed") is True and answer.get("warnings"), \
        f"when the deadline passes, --head-lookup-failure (allow) decides, with a warning ({answer})"


def test_ipv6_api(work, kube_token, start_mock, start_server):
    # cpp-httplib 0.11's URL pattern takes no hex letters in a bracketed host: ::ffff:7f00:1 is
    # 127.0.0.1 reached over IPv6 (an IPv4-mapped address), so the mock serves a certificate naming it.
    mock_certs = sign_with_ca(work, "mock", "mock-kube-api",
                              "subjectAltName=IP:::1,IP:::ffff:7f00:1\nextendedKeyUsage=serverAuth\n")
    for bind, url_host in (("::1", "[::1]"), ("127.0.0.1", "[::ffff:7f00:1]")):
        mock, port = start_mock("--bind", bind, "--tls-cert", f"{mock_certs}/tls.crt",
                                "--tls-key", f"{mock_certs}/tls.key")
        server = start_server("--kube-api-server", f"https://{url_host}:{port}", "--kube-ca-file",
                              f"{work}/certs/ca.crt", "--kube-token-file", kube_token)
        status, _, body = server.post("/validate", head_review("live-head"))
        answer = json.loads(body)["response"] if status == 200 else {}
        assert answer.get("allowed") is False and answer.get("status", {}).get("code") == 409, \
            f"--kube-api-server https://{url_host}:PORT reaches the API: a second head is denied ({answer})"
        server.stop()
        mock.terminate()
        mock.wait(timeout=10)
