#!/usr/bin/env python3
"""Writes a large audit dump to stdout, for timing `ray-webhook audit FILE`.

  audit-dump.py [--pods N] [--clusters C] [--drift K] > dump.json

One JSON List, minified, as `kubectl get rayclusters,pods -A -o json` lists a
cluster: C RayClusters, then N worker Pods spread over them. Each RayCluster
and Pod is the one of tests/fixtures/audit/clean-cluster.json under its own
names; each Pod has what differs per Pod in a real cluster (uid, node, the
service-account token volume's generated name, its creation time), and K
Pods of each cluster carry another image, so that the worker-drift rule has
something to report. The same arguments write the same bytes.
"""
import argparse
import copy
import json
import os
import random
import string
import sys

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures", "audit",
                       "clean-cluster.json")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pods", type=int, default=20000)
    parser.add_argument("--clusters", type=int, default=20)
    parser.add_argument("--drift", type=int, default=2, help="Pods per cluster with another image")
    args = parser.parse_args()
    with open(FIXTURE, encoding="utf-8") as f:
        items = json.load(f)["items"]
    cluster = next(i for i in items if i["kind"] == "RayCluster")
    worker = next(i for i in items if i["metadata"].get("labels", {}).get("ray.io/node-type") == "worker")
    rng = random.Random(1)
    suffix = lambda: "".join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(5))  # noqa: E731
    out = sys.stdout
    out.write('{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[')
    first = True

    def emit(obj):
        nonlocal first
        out.write(("" if first else ",") + json.dumps(obj, separators=(",", ":")))
        first = False

    for c in range(args.clusters):
        rc = copy.deepcopy(cluster)
        rc["metadata"]["name"] = f"raycluster-{c}"
        rc["metadata"]["uid"] = f"00000000-0000-0000-0000-{c:012d}"
        emit(rc)
    old_name = worker["metadata"]["labels"]["ray.io/cluster"]
    template = json.dumps(worker, separators=(",", ":"))
    for p in range(args.pods):
        c = p % args.clusters
        pod = json.loads(template.replace(old_name, f"raycluster-{c}"))
        meta, spec = pod["metadata"], pod["spec"]
        meta["name"] = f"raycluster-{c}-workergroup-worker-{suffix()}{p}"
        meta["uid"] = f"11111111-0000-0000-0000-{p:012d}"
        meta["creationTimestamp"] = f"2026-12-01T10:{p // 60 % 60:02d}:{p % 60:02d}Z"
        spec["nodeName"] = f"node-{p % 97}"
        token = "kube-api-access-" + suffix()
        for v in spec.get("volumes", []):
            if v["name"].startswith("kube-api-access-"):
                v["name"] = token
        for container in spec["containers"]:
            for m in container.get("volumeMounts", []):
                if m["name"].startswith("kube-api-access-"):
                    m["name"] = token
        if p // args.clusters < args.drift:
            spec["containers"][0]["image"] = "rayproject/ray:2.47.0"
        emit(pod)
    out.write("]}\n")


if __name__ == "__main__":
    main()
