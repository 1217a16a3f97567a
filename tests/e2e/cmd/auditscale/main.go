// Command auditscale fills the end-to-end cluster with Ray objects at scale
// and measures the server's cluster audit on it, for bench/audit-scale.sh:
//
//	auditscale populate -kubeconfig FILE -ray-webhook BIN -fixtures DIR -layout OUT [-nodes N] [-clusters N]
//	                    [-workers N] [-namespaces N] [-c N] [-qps Q] [-taint KEY] [-cluster-domain D]
//	auditscale probe    -kubeconfig FILE -layout FILE -metrics URL -ca FILE [-kind extra-head|finished-job]
//	                    [-n N] [-spread D] [-hold D] [-step-timeout D] [-poll D] [-taint KEY] [-no-report]
//	auditscale sizes    BEFORE AFTER      (kube-apiserver /metrics scrapes)
//	auditscale hist     -metric NAME [-label L] BEFORE AFTER
//	auditscale gauge    -metrics URL -ca FILE NAME{LABELS}...
//
// populate creates KWOK Nodes (each with a Pod range of its own, managed by
// the framework's KWOK through its annotation), the namespaces, the
// RayClusters (one worker group "workers") and, per RayCluster, a head and
// -workers worker Pods bound to the Nodes (spec.nodeName), as KubeRay 1.x
// builds them: bench/fixtures' head.json and worker.json with the changes
// ray-webhook's /admit answers applied once (so the audit finds nothing in
// them), owned by their RayCluster. It prints one JSON line with the counts and
// seconds of each step, and writes the (namespace, RayCluster) pairs to -layout.
//
// probe makes -n changes, their starts spread evenly over -spread, each on a
// RayCluster of its own (in distinct namespaces where there are enough): an
// extra head Pod (created without Ray labels and then labelled, so no
// admission webhook sees it), or a RayJob whose status (the status
// subresource) says it finished two seconds before and names the RayCluster.
// It times each from the change until the server's /metrics counts it and
// until the namespace's openreports.io Report holds it, then (after a random
// wait up to -hold) deletes it and times until both no longer do. It prints one JSON line with each change's
// times and their p50 and p99.
//
// sizes prints what kube-apiserver sent between two scrapes of its /metrics
// for LIST and for watches, per resource of the audit (apiserver_response_sizes_sum,
// apiserver_watch_events_sizes_sum). hist prints the count, p50 and p99 (ms,
// interpolated in the bucket, with the bucket's bounds) of a histogram's
// growth between two scrapes, per value of -label. gauge prints the values of
// metric series of a server's /metrics.
package main

import (
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: auditscale populate|probe|sizes|hist|gauge [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "populate":
		err = populate(os.Args[2:])
	case "probe":
		err = probe(os.Args[2:])
	case "sizes":
		err = sizes(os.Args[2:])
	case "hist":
		err = hist(os.Args[2:])
	case "gauge":
		err = gauge(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "auditscale:", err)
		os.Exit(1)
	}
}
