package e2e

// TestCostLeaks: the audit's cost-leak findings (docs/rules.md,
// finished-job-cluster and stuck-upgrade) on objects that KubeRay v1.6.2
// makes and updates itself, with real Ray in their Pods (framework.RunRayPods).
// One ray-webhook replica audits the cluster with short limits
// (costLeakAuditArgs); each check reads its findings from the namespace's
// openreports.io Report (the result naming the object, its message naming the
// RayClusters) and from its /metrics gauge ray_webhook_audit_findings{rule}.
//
//	finished-job-cluster  a RayJob with shutdownAfterJobFinishes false runs on real Ray to SUCCEEDED /
//	                      Complete; KubeRay keeps its RayCluster. The finding appears, not before
//	                      status.endTime plus the grace, naming the RayCluster and the Pods and CPUs it
//	                      holds; the RayCluster deleted, it clears (the RayJob stays Complete)
//	stuck-upgrade         a RayService serving on its first cluster; its rayClusterConfig given a
//	                      nodeSelector no node matches: KubeRay's new pending cluster cannot schedule
//	                      its head. The finding appears, not before the pending cluster's age passes
//	                      the limit, naming both clusters; the node given that label, the pending
//	                      cluster runs, KubeRay switches to it and the finding clears

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"ray-webhook/tests/e2e/framework"
)

const (
	ruleFinishedJobCluster = "finished-job-cluster"
	ruleStuckUpgrade       = "stuck-upgrade"

	// The limits the audit replica judges by: short, so that a finding shows
	// within seconds, long enough to see that it does not show before.
	costLeakGrace        = 15 * time.Second
	costLeakPendingLimit = 15 * time.Second
)

// costLeakAuditArgs are the audit replica's flags after the shipped ones:
// how it audits, and the two limits.
var costLeakAuditArgs = []string{
	"--audit-interval=1s",
	fmt.Sprintf("--audit-finished-job-grace=%ds", int(costLeakGrace.Seconds())),
	fmt.Sprintf("--audit-pending-cluster-limit=%ds", int(costLeakPendingLimit.Seconds())),
}

func TestCostLeaks(t *testing.T) {
	framework.Attach(t)
	framework.Operator(t, releaseCurrent)
	r := startCostLeakAudit(t, costLeakAuditArgs)
	t.Run(ruleFinishedJobCluster, func(t *testing.T) { testFinishedJobCluster(t, r) })
	t.Run(ruleStuckUpgrade, func(t *testing.T) { testStuckUpgrade(t, r) })
}

// startCostLeakAudit grants deploy/overlays/audit's read of the ray.io kinds
// and starts a replica with ARGS, routed to by nothing, whose audit writes
// the Reports and gauges these checks read.
func startCostLeakAudit(t *testing.T, args []string) *framework.Replica {
	t.Helper()
	auditGrant(t, "default")
	return framework.StartReplica(t, framework.ReplicaOptions{Name: "ray-webhook-cost-leaks", Route: framework.RouteNone, Args: args})
}

// costLeakResult is the message of the failed result of RULE for KIND/NAME
// in the Report of NS, and whether there is one; raw is the Report as stored.
func costLeakResult(t *testing.T, ns, rule, kind, name string) (msg string, ok bool, raw string) {
	t.Helper()
	rep, raw := auditReportIn(t, ns)
	if rep == nil {
		return "", false, raw
	}
	for _, r := range rep.Results {
		if r.Rule == rule && r.Result == "fail" && r.Policy == "ray-webhook" && len(r.Resources) == 1 &&
			r.Resources[0].Kind == kind && r.Resources[0].Name == name {
			return r.Message, true, raw
		}
	}
	return "", false, raw
}

// costLeakGauge is ray_webhook_audit_findings{rule="RULE"} on the replica's /metrics.
func costLeakGauge(c *framework.Cluster, r *framework.Replica, rule string) (int, error) {
	return replicaSeries(c, r, fmt.Sprintf(`ray_webhook_audit_findings{rule=%q}`, rule))
}

// mustCostLeakGauge is costLeakGauge, failing t when /metrics cannot be read.
func mustCostLeakGauge(t *testing.T, r *framework.Replica, rule string) int {
	t.Helper()
	v, err := costLeakGauge(framework.Attach(t), r, rule)
	if err != nil {
		t.Fatalf("the audit replica's gauge: %v", err)
	}
	return v
}

// clusterHolds is what the stored Pods of RayCluster NS/CLUSTER (head and
// workers) request, as a finding's message says it: "N Pod(s) requesting N
// CPU(s)", " and N GPU(s)" when they ask for any.
func clusterHolds(t *testing.T, ns, cluster string) string {
	t.Helper()
	pods := append(rayPods(t, ns, cluster, "head"), rayPods(t, ns, cluster, "worker")...)
	var cpuMilli, gpus int64
	for _, p := range pods {
		for _, ctr := range p.Spec.Containers {
			for res, q := range ctr.Resources.Requests {
				if res == corev1.ResourceCPU {
					cpuMilli += q.MilliValue()
				}
				if strings.HasSuffix(string(res), "/gpu") {
					gpus += q.Value()
				}
			}
		}
	}
	amount := func(milli int64) string {
		if milli%1000 == 0 {
			return strconv.FormatInt(milli/1000, 10)
		}
		return strconv.FormatFloat(float64(milli)/1000, 'f', 2, 64)
	}
	s := fmt.Sprintf("%d Pod(s) requesting %s CPU(s)", len(pods), amount(cpuMilli))
	if gpus > 0 {
		s += fmt.Sprintf(" and %d GPU(s)", gpus)
	}
	return s
}

// waitCostLeak waits until the Report of NS has RULE's result for KIND/NAME
// and the gauge counts at least one more than BASE; the message, when the
// Report was first read and when the result was first seen.
func waitCostLeak(t *testing.T, r *framework.Replica, rp *framework.RayPods, ns, rule, kind, name string, base int, timeout time.Duration) (msg string, polled, seen time.Time) {
	t.Helper()
	framework.Eventually(t, timeout, 500*time.Millisecond, func() (bool, string) {
		failOnDeath(t, rp)
		if polled.IsZero() {
			polled = time.Now()
		}
		m, ok, raw := costLeakResult(t, ns, rule, kind, name)
		if !ok {
			return false, fmt.Sprintf("the Report of %s has no %s result for %s %s: %s (replica log: %s)",
				ns, rule, kind, name, truncate(raw, 400), r.Process.Log)
		}
		if seen.IsZero() {
			seen, msg = time.Now(), m
		}
		return true, ""
	})
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, func() (bool, string) {
		v, err := costLeakGauge(framework.Attach(t), r, rule)
		return err == nil && v >= base+1, fmt.Sprintf("ray_webhook_audit_findings{rule=%q} %d (%v), want at least %d", rule, v, err, base+1)
	})
	return msg, polled, seen
}

// waitCostLeakCleared waits until the Report of NS (if any) has no result of
// RULE for KIND/NAME and the gauge is back at BASE.
func waitCostLeakCleared(t *testing.T, r *framework.Replica, ns, rule, kind, name string, base int, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, 500*time.Millisecond, func() (bool, string) {
		if _, ok, raw := costLeakResult(t, ns, rule, kind, name); ok {
			return false, fmt.Sprintf("the Report of %s still has a %s result for %s %s: %s", ns, rule, kind, name, truncate(raw, 400))
		}
		v, err := costLeakGauge(framework.Attach(t), r, rule)
		return err == nil && v == base, fmt.Sprintf("ray_webhook_audit_findings{rule=%q} %d (%v), want %d again", rule, v, err, base)
	})
}

// testFinishedJobCluster: a RayJob that keeps its RayCluster once it
// finished (shutdownAfterJobFinishes false), run on real Ray.
func testFinishedJobCluster(t *testing.T, r *framework.Replica) {
	c := framework.Attach(t)
	ctx := context.Background()
	ns := framework.NewNamespace(t, "e2e-cost-job")
	rp := framework.RunRayPods(t, ns, framework.Kubelet{})
	base := mustCostLeakGauge(t, r, ruleFinishedJobCluster)
	const name = "rj-leak"
	t0 := time.Now()
	framework.Create(t, ns, framework.Manifest(t, rayJobRealFixture, map[string]string{"NAME": name}))

	// KubeRay runs the job to the end: SUCCEEDED / Complete, an end time, its cluster named.
	var job *unstructured.Unstructured
	framework.Eventually(t, 5*time.Minute, 2*time.Second, func() (bool, string) {
		failOnDeath(t, rp)
		var err error
		if job, err = c.Dynamic.Resource(resourcesRayJobs).Namespace(ns).Get(ctx, name, metav1.GetOptions{}); err != nil {
			return false, err.Error()
		}
		deploy, _, _ := unstructured.NestedString(job.Object, "status", "jobDeploymentStatus")
		status, _, _ := unstructured.NestedString(job.Object, "status", "jobStatus")
		if status == "FAILED" || deploy == "Failed" {
			msg, _, _ := unstructured.NestedString(job.Object, "status", "message")
			t.Fatalf("RayJob %s/%s: jobStatus %s, jobDeploymentStatus %s: %s", ns, name, status, deploy, msg)
		}
		return status == "SUCCEEDED" && deploy == "Complete", fmt.Sprintf("RayJob %s/%s: jobStatus %q, jobDeploymentStatus %q", ns, name, status, deploy)
	})
	tComplete := time.Since(t0)
	// The fixture says false; once KubeRay has updated the RayJob it is no field (omitempty).
	if keep, _, _ := unstructured.NestedBool(job.Object, "spec", "shutdownAfterJobFinishes"); keep {
		t.Fatalf("RayJob %s/%s: spec.shutdownAfterJobFinishes true, want false", ns, name)
	}
	cluster, _, _ := unstructured.NestedString(job.Object, "status", "rayClusterName")
	endText, _, _ := unstructured.NestedString(job.Object, "status", "endTime")
	end, err := time.Parse(time.RFC3339, endText)
	if cluster == "" || err != nil {
		t.Fatalf("RayJob %s/%s: status.rayClusterName %q, status.endTime %q (%v)", ns, name, cluster, endText, err)
	}

	// KubeRay keeps the cluster; the audit names it once the grace has passed.
	msg, polled, seen := waitCostLeak(t, r, rp, ns, ruleFinishedJobCluster, "RayJob", name, base, costLeakGrace+2*time.Minute)
	if seen.Before(end.Add(costLeakGrace)) {
		t.Errorf("the finding was seen at %s, before the job's end %s plus the grace %v", seen.UTC().Format(time.RFC3339Nano), endText, costLeakGrace)
	}
	rc, err := c.Dynamic.Resource(rayClustersV1).Namespace(ns).Get(ctx, cluster, metav1.GetOptions{})
	if err != nil || rc.GetDeletionTimestamp() != nil {
		t.Fatalf("RayCluster %s/%s, which the finding names, is not there to keep: %v", ns, cluster, err)
	}
	holds := clusterHolds(t, ns, cluster)
	for _, want := range []string{
		"RayJob " + name + " ended Complete ",
		"its RayCluster " + cluster + " still runs: " + holds + ".",
		"shutdownAfterJobFinishes is not set",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the finding's message has no %q: %s", want, msg)
		}
	}
	tFound := time.Since(t0)
	t.Logf("RayJob %s/%s Complete at %s (endTime), its RayCluster %s kept (%s); the Report read from %.1f s after endTime, the finding seen %.1f s after it: %s",
		ns, name, endText, cluster, holds, polled.Sub(end).Seconds(), seen.Sub(end).Seconds(), msg)

	// The cluster deleted: the finding clears; KubeRay leaves the job Complete.
	if err := c.Dynamic.Resource(rayClustersV1).Namespace(ns).Delete(ctx, cluster, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting RayCluster %s: %v", cluster, err)
	}
	deleted := time.Now()
	waitCostLeakCleared(t, r, ns, ruleFinishedJobCluster, "RayJob", name, base, time.Minute)
	cleared := time.Since(deleted)
	job, err = c.Dynamic.Resource(resourcesRayJobs).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("RayJob %s after its cluster was deleted: %v", name, err)
	}
	if deploy, _, _ := unstructured.NestedString(job.Object, "status", "jobDeploymentStatus"); deploy != "Complete" {
		t.Errorf("RayJob %s: jobDeploymentStatus %q once its cluster was deleted, want Complete", name, deploy)
	}
	t.Logf("times: RayJob Complete %.0f s after its creation, the finding at %.0f s, cleared %.1f s after the RayCluster's deletion; %.0f s in all",
		tComplete.Seconds(), tFound.Seconds(), cleared.Seconds(), time.Since(t0).Seconds())
}

// costLeakService is RayService NS/NAME's active and pending cluster and its Ready condition.
func costLeakService(t *testing.T, ns, name string) (active, pending, ready string) {
	t.Helper()
	rs, err := framework.Attach(t).Dynamic.Resource(rayServicesV1).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		return "", "", "get: " + err.Error()
	}
	active, _, _ = unstructured.NestedString(rs.Object, "status", "activeServiceStatus", "rayClusterName")
	pending, _, _ = unstructured.NestedString(rs.Object, "status", "pendingServiceStatus", "rayClusterName")
	conds, _, _ := unstructured.NestedSlice(rs.Object, "status", "conditions")
	for _, x := range conds {
		if m, ok := x.(map[string]any); ok && m["type"] == "Ready" {
			ready, _ = m["status"].(string)
		}
	}
	return active, pending, ready
}

// waitServing waits until RayService NS/NAME is Ready with an active cluster
// other than NOT and nothing pending; the active cluster.
func waitServing(t *testing.T, rp *framework.RayPods, ns, name, not string, timeout time.Duration) string {
	t.Helper()
	var active string
	framework.Eventually(t, timeout, time.Second, func() (bool, string) {
		failOnDeath(t, rp)
		a, p, ready := costLeakService(t, ns, name)
		active = a
		return a != "" && a != not && p == "" && ready == "True", fmt.Sprintf("RayService %s/%s: active %q, pending %q, Ready %q", ns, name, a, p, ready)
	})
	return active
}

// testStuckUpgrade: a RayService upgrade whose new cluster cannot be
// scheduled, then can.
func testStuckUpgrade(t *testing.T, r *framework.Replica) {
	c := framework.Attach(t)
	ctx := context.Background()
	ns := framework.NewNamespace(t, "e2e-cost-upgrade")
	app, err := os.ReadFile("testdata/serve-app/echo_app.py")
	if err != nil {
		t.Fatal(err)
	}
	rp := framework.RunRayPods(t, ns, framework.Kubelet{}, framework.ImageFile{Name: "echo_app.py", Content: string(app)})
	base := mustCostLeakGauge(t, r, ruleStuckUpgrade)
	const name = "rs-leak"
	t0 := time.Now()
	framework.Create(t, ns, framework.Manifest(t, "testdata/rayservice-upgrade-v1.yaml", map[string]string{"NAME": name}))

	// (1) Serving on its first cluster. That cluster was the pending one
	// until it was ready (the audit may have named it meanwhile); with
	// nothing pending there is no finding.
	c1 := waitServing(t, rp, ns, name, "", 4*time.Minute)
	tServing := time.Since(t0)
	waitCostLeakCleared(t, r, ns, ruleStuckUpgrade, "RayService", name, base, 30*time.Second)

	// (2) The upgrade: both Pod templates get a nodeSelector that no node
	// matches, so KubeRay's new cluster has a head that cannot be scheduled.
	label := "e2e.ray-webhook.io/cost-leaks"
	selector := map[string]string{label: ns}
	ops := []map[string]any{
		{"op": "add", "path": "/spec/rayClusterConfig/headGroupSpec/template/spec/nodeSelector", "value": selector},
		{"op": "add", "path": "/spec/rayClusterConfig/workerGroupSpecs/0/template/spec/nodeSelector", "value": selector},
	}
	patch, _ := json.Marshal(ops)
	if _, err := c.Dynamic.Resource(rayServicesV1).Namespace(ns).Patch(ctx, name, types.JSONPatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatalf("changing spec.rayClusterConfig: %v", err)
	}
	tPatched := time.Now()
	var c2 string
	framework.Eventually(t, time.Minute, 500*time.Millisecond, func() (bool, string) {
		a, p, ready := costLeakService(t, ns, name)
		c2 = p
		return p != "" && p != c1 && a == c1, fmt.Sprintf("RayService %s/%s: active %q, pending %q, Ready %q", ns, name, a, p, ready)
	})
	// Its head and worker stored, Pending: unschedulable.
	framework.Eventually(t, time.Minute, 500*time.Millisecond, func() (bool, string) {
		heads, workers := rayPods(t, ns, c2, "head"), rayPods(t, ns, c2, "worker")
		if len(heads) != 1 || len(workers) != 1 {
			return false, fmt.Sprintf("pending cluster %s: %d head and %d worker Pods stored, want 1 and 1", c2, len(heads), len(workers))
		}
		for _, p := range append(heads, workers...) {
			unschedulable := false
			for _, cond := range p.Status.Conditions {
				unschedulable = unschedulable || (cond.Type == corev1.PodScheduled && cond.Status == corev1.ConditionFalse && cond.Reason == "Unschedulable")
			}
			if p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" || !unschedulable {
				return false, fmt.Sprintf("Pod %s: phase %s, node %q, conditions %v; want Pending and Unschedulable", p.Name, p.Status.Phase, p.Spec.NodeName, p.Status.Conditions)
			}
		}
		return true, ""
	})
	rc2, err := c.Dynamic.Resource(rayClustersV1).Namespace(ns).Get(ctx, c2, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("pending RayCluster %s: %v", c2, err)
	}
	created := rc2.GetCreationTimestamp().Time

	// (3) The finding, once the pending cluster is older than the limit,
	// naming both clusters and what each holds.
	msg, polled, seen := waitCostLeak(t, r, rp, ns, ruleStuckUpgrade, "RayService", name, base, costLeakPendingLimit+2*time.Minute)
	if seen.Before(created.Add(costLeakPendingLimit)) {
		t.Errorf("the finding was seen at %s, before the pending cluster's creation %s plus the limit %v",
			seen.UTC().Format(time.RFC3339Nano), created.UTC().Format(time.RFC3339), costLeakPendingLimit)
	}
	for _, want := range []string{
		"RayService " + name + "'s new RayCluster " + c2 + " has been pending for ",
		"(" + clusterHolds(t, ns, c2) + ")",
		"beside its active RayCluster " + c1 + " (" + clusterHolds(t, ns, c1) + ")",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("the finding's message has no %q: %s", want, msg)
		}
	}
	t.Logf("RayService %s/%s: active %s, pending %s created %s (unschedulable); the Report read from %.1f s after, the finding seen %.1f s after: %s",
		ns, name, c1, c2, created.UTC().Format(time.RFC3339), polled.Sub(created).Seconds(), seen.Sub(created).Seconds(), msg)

	// (4) The node gets the label: the pending cluster is scheduled and runs,
	// KubeRay switches the service to it, and the finding clears.
	nodePatch := func(value any) error {
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{label: value}}})
		_, err := c.Kube.CoreV1().Nodes().Patch(context.Background(), framework.KwokNode, types.MergePatchType, b, metav1.PatchOptions{})
		return err
	}
	t.Cleanup(func() {
		if err := nodePatch(nil); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("removing label %s from node %s: %v", label, framework.KwokNode, err)
		}
	})
	if err := nodePatch(ns); err != nil {
		t.Fatalf("labelling node %s %s=%s: %v", framework.KwokNode, label, ns, err)
	}
	fixed := time.Now()
	if got := waitServing(t, rp, ns, name, c1, 4*time.Minute); got != c2 {
		t.Fatalf("RayService %s/%s switched to %s, want the pending cluster %s", ns, name, got, c2)
	}
	switched := time.Now()
	waitCostLeakCleared(t, r, ns, ruleStuckUpgrade, "RayService", name, base, 30*time.Second)
	t.Logf("times: serving on %s %.0f s after the RayService's creation; the finding %.1f s after the upgrade's patch; the node labelled: switched to %s %.0f s later, the finding cleared %.1f s after the switch; %.0f s in all",
		c1, tServing.Seconds(), seen.Sub(tPatched).Seconds(), c2, switched.Sub(fixed).Seconds(), time.Since(switched).Seconds(), time.Since(t0).Seconds())
}
