"""--kuberay-version auto: the release read from the KubeRay operator's Deployment, served by the
mock API, judges /validate and is shown by /readyz and /metrics; without an API the fixed release
judges, and says why."""
import json
import os
import time

from server_harness import metric

# Refused by KubeRay 1.7.0 and later (autoscaler-start-command-env), allowed by 1.6.2.
AUTOSCALER_COMMAND = {
    "apiVersion": "ray.io/v1", "kind": "RayCluster",
    "metadata": {"name": "autoscaler-command", "namespace": "default"},
    "spec": {
        "enableInTreeAutoscaling": True,
        "autoscalerOptions": {"env": [{"name": "KUBERAY_GEN_AUTOSCALER_START_CMD", "value": "ray kuberay-autoscaler"}]},
        "headGroupSpec": {"rayStartParams": {}, "template": {"spec": {"containers": [
            {"name": "ray-head", "image": "rayproject/ray:2.52.0"}]}}},
    },
}


def review(obj):
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {
        "uid": "release-1", "kind": {"group": "ray.io", "version": "v1", "kind": "RayCluster"},
        "resource": {"group": "ray.io", "version": "v1", "resource": "rayclusters"},
        "namespace": "default", "name": obj["metadata"]["name"], "operation": "CREATE",
        "userInfo": {"username": "test"}, "object": obj}}).encode()


def allowed(server):
    status, _, body = server.post("/validate", review(AUTOSCALER_COMMAND))
    assert status == 200, body
    return json.loads(body)["response"]["allowed"]


def operator_deployment(image):
    return {"kind": "Deployment", "apiVersion": "apps/v1",
            "metadata": {"name": "kuberay-operator", "namespace": "ray-system", "resourceVersion": "7",
                         "labels": {"app.kubernetes.io/name": "kuberay-operator"}},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "kuberay-operator", "image": image, "args": ["--feature-gates=RayCronJob=true"]}]}}}}


def readyz_says(server, text, within=10.0):
    deadline = time.monotonic() + within
    body = b""
    while time.monotonic() < deadline:
        status, _, body = server.get("/readyz")
        if status == 200 and text in body.decode():
            return True
        time.sleep(0.05)
    raise AssertionError(f"/readyz never said {text!r}; last: {body.decode()!r}")


def test_auto_judges_by_the_operators_release(work, kube_token, start_mock, start_server):
    objects = os.path.join(work, "objects.json")
    script = os.path.join(work, "watch-script.json")
    with open(objects, "w") as f:
        json.dump({"items": [operator_deployment("quay.io/kuberay/operator:v1.7.0")]}, f)
    with open(script, "w") as f:
        json.dump({"watches": []}, f)  # every watch stays open with nothing in it
    _, port = start_mock("--objects", objects, "--watch-script", script)
    api = ["--kube-api-server", f"https://127.0.0.1:{port}", "--kube-ca-file", f"{work}/certs/ca.crt",
           "--kube-token-file", kube_token]
    fixed = start_server(*api)
    assert allowed(fixed), "the fixed release 1.6.2 allows the autoscaler's start command by env"
    auto = start_server(*api, "--kuberay-version", "auto")
    readyz_says(auto, "kuberay release: KubeRay 1.7.0 from Deployment ray-system/kuberay-operator "
                      "(image quay.io/kuberay/operator:v1.7.0), feature gates RayCronJob=true")
    assert not allowed(auto), "the operator's release, 1.7.0, refuses it"
    text = auto.get("/metrics")[2].decode()
    assert metric(text, "ray_webhook_kuberay_release_info", source="operator", version="1.7.0") == 1
    assert metric(fixed.get("/metrics")[2].decode(), "ray_webhook_kuberay_release_info", source="flag",
                  version="1.6.2") == 1


def test_auto_without_an_api_judges_by_the_fixed_release(start_server):
    server = start_server("--kuberay-version", "auto:1.7.0")
    readyz_says(server, "kuberay release: no Kubernetes API configured (not in a cluster, no --kube-api-server); "
                        "judging by the fixed release 1.7.0")
    assert not allowed(server), "the fixed release after auto: judges"
    text = server.get("/metrics")[2].decode()
    assert metric(text, "ray_webhook_kuberay_release_info", source="no_api", version="1.7.0") == 1
