"""/metrics after known traffic, and the chart's dashboard and alerting rules against what the
server exports."""
import json
import os
import re

from server_harness import fixture, metric, not_after

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_metrics(work, start_server):
    server = start_server()
    for _ in range(3):
        server.post("/mutate", fixture("kuberay-0.4-worker.json"))
    server.post("/validate", b"not json")
    server.post("/validate", fixture("dupmount-worker.json"))
    server.post("/validate", fixture("dup-env-warning.json"))
    server.post("/admit", fixture("kuberay-0.4-worker.json"))
    status, headers, body = server.get("/metrics")
    text = body.decode()
    assert status == 200 and headers.get("content-type", "").startswith("text/plain; version=0.0.4"), \
        "/metrics is Prometheus text"
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
    # Every sample is compared before any failure is reported, so one run names all that differ.
    wrong = [f"{name}{labels} == {value} (got {got})" for name, labels, value in expect
             if (got := metric(text, name, **labels)) != value]
    assert not wrong, "; ".join(wrong)
    assert metric(text, "controller_runtime_webhook_latency_seconds_bucket", webhook="/mutate", le="+Inf") == 3, \
        "the latency histogram has buckets"


def promql_metric_names(expr):
    """The metric names a PromQL expression selects: identifiers right before a {...} selector."""
    return set(re.findall(r"([a-zA-Z_:][a-zA-Z0-9_:]*)\{", expr))


def test_monitoring(server_with_mock_api):
    """The chart's dashboard and alerting rules name only metrics the server exports."""
    server, _ = server_with_mock_api("--audit-interval", "1s")
    text = server.get("/metrics")[2].decode()
    families = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    # A histogram's series are NAME_bucket, NAME_sum and NAME_count.
    exported = set(families) | {f"{n}_{s}" for n, t in families.items() if t == "histogram"
                                for s in ("bucket", "sum", "count")}
    with open(os.path.join(REPO, "charts", "ray-webhook", "files", "dashboard.json")) as f:
        dashboard = json.load(f)
    exprs = [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    named = set().union(*(promql_metric_names(e) for e in exprs))
    assert len(exprs) >= 10 and len(named) >= 10, f"the dashboard has {len(exprs)} queries over {len(named)} metrics"
    assert named <= exported, f"every dashboard query names an exported metric (not: {sorted(named - exported)})"
    with open(os.path.join(REPO, "charts", "ray-webhook", "files", "alerts.rules.yaml")) as f:
        rules = f.read()
    ours = {n for n in promql_metric_names(rules) if n.startswith(("ray_webhook_", "controller_runtime_", "certwatcher_"))}
    assert len(ours) >= 5 and ours <= exported, \
        f"the alerting rules name {len(ours)} of ray-webhook's metrics, all exported (not: {sorted(ours - exported)})"
    assert "ray_webhook_serving_certificate_expiration_timestamp_seconds" in families and \
        "ray_webhook_audit_findings" in families, "the certificate's expiration and the audit's gauges are exported"
