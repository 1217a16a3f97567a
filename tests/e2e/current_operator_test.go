package e2e

// TestCurrentOperator: KubeRay v1.6.2 makes its Pods through ray-webhook; each
// check in its own namespace, the Pods Pending (no toleration of the KWOK
// node's taint), so no Ray dashboard is ever called.
//
//	workers-unpatched        a RayCluster: its head stored as <cluster>-head, 2 workers stored as
//	                         the operator built them (ray-webhook logged patch_ops=0 for every
//	                         worker review, no env name twice, the operator's own FQ_RAY_IP)
//	owned-clusters           the RayClusters a RayJob and a RayService make (<owner>-<5 random>):
//	                         each head stored as <cluster>-head, each worker unpatched, no
//	                         duplicate env
//	second-head-generatename a copy of the live head with generateName gets the deterministic
//	                         name: 409 AlreadyExists from the API server naming <cluster>-head
//	second-head-other-name   a copy with another fixed name: refused by the head-name rule (403)
//	second-head-exempt       a copy the name rule exempts (Autoscaler v2 on Ray 2.46): refused by
//	                         the second-head lookup (409 naming the live head), logged
//	                         head_lookup=yes, nothing stored
//	dry-run-warning          kubectl create --dry-run=server of a worker with RAY_CLUSTER_NAME
//	                         twice: both webhooks reviewed it, ray-webhook's warning is a
//	                         `Warning:` line besides the API server's own, nothing stored
//	rayservice-upgrade-long-names
//	                         a RayService of 47 characters (clusters of 53) upgraded: each new
//	                         cluster's head is stored (no 409, no "already exists" in the
//	                         operator's log) under a name other than the old head's and other
//	                         than KubeRay's own (the first 50 characters plus -head), at most 63
//	                         characters; never two live heads of one cluster (polled); a third
//	                         cluster whose KubeRay head name is certain to collide with the
//	                         second's (status.pendingServiceStatus.rayClusterName written by
//	                         the test) included

import (
	"context"
	"fmt"
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
	currentPendingFixture = "testdata/current-raycluster.yaml"
	currentRayJobFixture  = "testdata/current-rayjob.yaml"
	currentServiceFixture = "testdata/current-rayservice.yaml"
	currentCluster        = "rc-current"
	currentDenied         = `admission webhook "mutate.pods.ray-webhook.io" denied the request`
)

func TestCurrentOperator(t *testing.T) {
	framework.Attach(t)
	op := framework.Operator(t, releaseCurrent)
	t.Run("workers-unpatched", testCurrentWorkersUnpatched)
	t.Run("owned-clusters", testCurrentOwnedClusters)
	t.Run("second-head-generatename", testCurrentSecondHeadGenerateName)
	t.Run("second-head-other-name", testCurrentSecondHeadOtherName)
	t.Run("second-head-exempt", testCurrentSecondHeadExempt)
	t.Run("dry-run-warning", testCurrentDryRunWarning)
	t.Run("rayservice-upgrade-long-names", func(t *testing.T) { testCurrentUpgradeLongNames(t, op) })
}

// currentWaitStored waits until CLUSTER in NS has exactly HEADS stored heads
// and at least WORKERS stored workers.
func currentWaitStored(t testing.TB, ns, cluster string, heads, workers int, timeout time.Duration) ([]corev1.Pod, []corev1.Pod) {
	t.Helper()
	var h, w []corev1.Pod
	framework.Eventually(t, timeout, 500*time.Millisecond, func() (bool, string) {
		h, w = rayPods(t, ns, cluster, "head"), rayPods(t, ns, cluster, "worker")
		return len(h) == heads && len(w) >= workers,
			fmt.Sprintf("%s/%s: %d heads (want %d), %d workers (want %d)", ns, cluster, len(h), heads, len(w), workers)
	})
	return h, w
}

// currentMutateLines are ray-webhook's /admit lines of namespace NS that
// contain every one of MATCH, and those of them that are not patch_ops=0.
func currentMutateLines(t testing.TB, ns string, match ...string) (all, patched []string) {
	t.Helper()
	c := framework.Attach(t)
	all = framework.Lines(c.WebhookLog, append([]string{"path=/admit ", " namespace=" + ns + " "}, match...)...)
	for _, l := range all {
		if !strings.Contains(l, " patch_ops=0 ") {
			patched = append(patched, l)
		}
	}
	return all, patched
}

func testCurrentWorkersUnpatched(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-current-workers")
	createCluster(t, ns, currentPendingFixture, currentCluster, map[string]string{"REPLICAS": "2"})
	heads, workers := currentWaitStored(t, ns, currentCluster, 1, 2, 2*time.Minute)
	if heads[0].Name != currentCluster+"-head" {
		t.Errorf("head stored as %s, want %s-head (the deterministic name)", heads[0].Name, currentCluster)
	}
	// ray-webhook writes a review's line shortly after its answer.
	framework.WaitLines(t, c.WebhookLog, 2, "path=/admit ", " namespace="+ns+" ", " pod="+currentCluster+"-workers-worker-")
	reviews, patched := currentMutateLines(t, ns, " pod="+currentCluster+"-workers-worker-")
	if len(reviews) < 2 {
		t.Errorf("%d worker reviews logged, want at least 2", len(reviews))
	}
	if len(patched) > 0 {
		t.Errorf("worker reviews that patched (not patch_ops=0):\n%s", strings.Join(patched, "\n"))
	}
	fqdn := fmt.Sprintf("%s.%s.svc.%s", headService(currentCluster), ns, c.ClusterDomain)
	for i := range workers {
		w := &workers[i]
		if d := duplicateEnv(w); len(d) > 0 {
			t.Errorf("worker %s has duplicate env %v", w.Name, d)
		}
		if got := oneEnv(t, w, w.Spec.Containers[0], "FQ_RAY_IP"); got != fqdn {
			t.Errorf("worker %s: FQ_RAY_IP %q, want the operator's %q", w.Name, got, fqdn)
		}
	}
	t.Logf("head %s; %d workers; %d worker reviews, all patch_ops=0", heads[0].Name, len(workers), len(reviews))
}

func testCurrentOwnedClusters(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-current-owned")
	framework.Create(t, ns, framework.Manifest(t, currentRayJobFixture, map[string]string{"NAME": "job-e2e"}))
	framework.Create(t, ns, framework.Manifest(t, currentServiceFixture, map[string]string{"NAME": "service-e2e"}))
	// owner kind -> cluster name, once both clusters have a head and a worker stored
	owned := map[string]string{}
	framework.Eventually(t, 2*time.Minute, time.Second, func() (bool, string) {
		list, err := c.Dynamic.Resource(rayClustersV1).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		found := map[string]string{}
		var why []string
		for _, rc := range list.Items {
			refs := rc.GetOwnerReferences()
			if len(refs) == 0 {
				continue
			}
			h, w := rayPods(t, ns, rc.GetName(), "head"), rayPods(t, ns, rc.GetName(), "worker")
			if len(h) >= 1 && len(w) >= 1 {
				found[refs[0].Kind] = rc.GetName()
			} else {
				why = append(why, fmt.Sprintf("%s cluster %s: %d heads, %d workers", refs[0].Kind, rc.GetName(), len(h), len(w)))
			}
		}
		owned = found
		return found["RayJob"] != "" && found["RayService"] != "",
			fmt.Sprintf("clusters with a head and a worker: %v; others: %v", found, why)
	})
	for _, kind := range []string{"RayJob", "RayService"} {
		cl := owned[kind]
		heads, workers := rayPods(t, ns, cl, "head"), rayPods(t, ns, cl, "worker")
		if len(heads) != 1 || heads[0].Name != cl+"-head" {
			var names []string
			for _, h := range heads {
				names = append(names, h.Name)
			}
			t.Errorf("%s cluster %s: heads %v, want exactly [%s-head]", kind, cl, names, cl)
		}
		for i := range workers {
			if d := duplicateEnv(&workers[i]); len(d) > 0 {
				t.Errorf("%s cluster %s: worker %s has duplicate env %v", kind, cl, workers[i].Name, d)
			}
		}
		framework.WaitLines(t, c.WebhookLog, 1, "path=/admit ", " namespace="+ns+" ", " cluster="+cl+" ", "-worker- ")
		reviews, patched := currentMutateLines(t, ns, " cluster="+cl+" ", "-worker- ")
		if len(reviews) < 1 {
			t.Errorf("%s cluster %s: no worker review logged", kind, cl)
		}
		if len(patched) > 0 {
			t.Errorf("%s cluster %s: worker reviews that patched:\n%s", kind, cl, strings.Join(patched, "\n"))
		}
		t.Logf("%s cluster %s: head %s, %d workers, %d worker reviews, all patch_ops=0", kind, cl, cl+"-head", len(workers), len(reviews))
	}
}

// currentLiveHead creates a RayCluster (no workers) in a new namespace and
// returns its stored head, live (Pending).
func currentLiveHead(t *testing.T, prefix string) (string, corev1.Pod) {
	t.Helper()
	ns := framework.NewNamespace(t, prefix)
	createCluster(t, ns, currentPendingFixture, currentCluster, map[string]string{"REPLICAS": "0"})
	heads, _ := currentWaitStored(t, ns, currentCluster, 1, 0, 2*time.Minute)
	if !live(&heads[0]) {
		t.Fatalf("head %s/%s is not live: phase %s", ns, heads[0].Name, heads[0].Status.Phase)
	}
	return ns, heads[0]
}

// currentCopy is the stored head as a new object: generateName <cluster>-head-
// when name is "", else that name.
func currentCopy(head corev1.Pod, name string) *corev1.Pod {
	p := head.DeepCopy()
	p.Status = corev1.PodStatus{}
	p.UID, p.ResourceVersion, p.CreationTimestamp, p.ManagedFields = "", "", metav1.Time{}, nil
	p.Name, p.GenerateName = "", ""
	if name == "" {
		p.GenerateName = currentCluster + "-head-"
	} else {
		p.Name = name
	}
	return p
}

// currentNotStored fails t when Pod NS/NAME exists.
func currentNotStored(t testing.TB, ns, name string) {
	t.Helper()
	c := framework.Attach(t)
	_, err := c.Kube.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("Pod %s/%s: get returned %v, want NotFound (nothing stored)", ns, name, err)
	}
}

func testCurrentSecondHeadGenerateName(t *testing.T) {
	c := framework.Attach(t)
	ns, head := currentLiveHead(t, "e2e-current-5a")
	got, err := c.Kube.CoreV1().Pods(ns).Create(context.Background(), currentCopy(head, ""), metav1.CreateOptions{})
	if err == nil {
		t.Fatalf("second head with generateName stored as %s, want 409 AlreadyExists", got.Name)
	}
	if !apierrors.IsAlreadyExists(err) || !strings.Contains(err.Error(), `"`+currentCluster+`-head" already exists`) {
		t.Fatalf("second head with generateName: %v (reason %s), want AlreadyExists naming %q", err, apierrors.ReasonForError(err), currentCluster+"-head")
	}
	t.Logf("API server: %v", err)
}

func testCurrentSecondHeadOtherName(t *testing.T) {
	c := framework.Attach(t)
	ns, head := currentLiveHead(t, "e2e-current-5b")
	name := currentCluster + "-head-copy"
	_, err := c.Kube.CoreV1().Pods(ns).Create(context.Background(), currentCopy(head, name), metav1.CreateOptions{})
	if err == nil || !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), currentDenied) {
		t.Errorf("second head %s: %v (reason %s), want 403 Forbidden from %s", name, err, apierrors.ReasonForError(err), currentDenied)
	}
	currentNotStored(t, ns, name)
	t.Logf("API server: %.300v", err)
}

func testCurrentSecondHeadExempt(t *testing.T) {
	c := framework.Attach(t)
	ns, head := currentLiveHead(t, "e2e-current-5c")
	name := currentCluster + "-head-v2"
	p := currentCopy(head, name)
	// Autoscaler v2 on Ray < 2.48: exempt from the head-name rule, so the
	// second-head lookup (deploy/'s ServiceAccount token) alone decides.
	p.Spec.Containers[0].Image = "rayproject/ray:2.46.0"
	p.Spec.Containers[0].Env = append(p.Spec.Containers[0].Env, corev1.EnvVar{Name: "RAY_enable_autoscaler_v2", Value: "1"})
	lookup := []string{"head_lookup=yes", " namespace=" + ns + " "}
	before := framework.CountLines(c.WebhookLog, lookup...)
	_, err := c.Kube.CoreV1().Pods(ns).Create(context.Background(), p, metav1.CreateOptions{})
	if err == nil || !apierrors.IsConflict(err) || !strings.Contains(err.Error(), currentDenied) ||
		!strings.Contains(err.Error(), `already has a live head Pod "`+head.Name+`"`) {
		t.Errorf("exempt second head %s: %v (reason %s), want 409 Conflict from %s naming the live head %s",
			name, err, apierrors.ReasonForError(err), currentDenied, head.Name)
	}
	framework.WaitLines(t, c.WebhookLog, before+1, lookup...)
	currentNotStored(t, ns, name)
	t.Logf("API server: %.300v", err)
}

func testCurrentDryRunWarning(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-current-dryrun")
	const pod = "dry-run-worker"
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[1]s
  labels: {ray.io/node-type: worker, ray.io/cluster: %[2]s, ray.io/group: workers}
spec:
  containers:
  - name: ray-worker
    image: rayproject/ray:2.52.0
    command: ["/bin/bash", "-c", "--"]
    args: ["ray start --address=%[2]s-head-svc:6379 --block"]
    env:
    - {name: RAY_CLUSTER_NAME, value: %[2]s}
    - {name: RAY_CLUSTER_NAME, value: %[2]s}
`, pod, currentCluster)
	review := []string{"path=/admit ", " namespace=" + ns + " ", " pod=" + pod + " "}
	before := framework.CountLines(c.WebhookLog, review...)
	r := framework.Kubectl(t, manifest, "-n", ns, "create", "--dry-run=server", "-f", "-")
	out := r.Combined()
	if r.Err != nil {
		t.Fatalf("kubectl create --dry-run=server: %v\n%s", r.Err, out)
	}
	if !strings.Contains(r.Stdout, "(server dry run)") {
		t.Errorf("kubectl printed no (server dry run):\n%s", out)
	}
	// kube-apiserver warns on its own ("hides previous definition"); ray-webhook's
	// warning is another Warning: line naming the variable.
	var ours []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "Warning: ") && strings.Contains(l, "RAY_CLUSTER_NAME") && !strings.Contains(l, "hides previous definition") {
			ours = append(ours, l)
		}
	}
	if len(ours) == 0 {
		t.Errorf("no Warning: line of ray-webhook naming RAY_CLUSTER_NAME:\n%s", out)
	}
	// The one call (/admit) was made on the dry run.
	framework.WaitLines(t, c.WebhookLog, before+1, review...)
	currentNotStored(t, ns, pod)
	t.Logf("kubectl:\n%s", out)
}

// currentUpgradeCluster is one cluster of the RayService as first seen with
// its head stored: the names of its stored heads and its controller.
type currentUpgradeCluster struct {
	Name  string
	Heads []string
	Owner string // KIND/NAME
}

func testCurrentUpgradeLongNames(t *testing.T, op *framework.KubeRay) {
	c := framework.Attach(t)
	ctx := context.Background()
	ns := framework.NewNamespace(t, "e2e-current-upgrade")
	// 47 characters, KubeRay's limit for a RayService (MaxRayServiceNameLength);
	// its clusters are <service>-<5 random>, 53 characters.
	const rs = "e2e-rayservice-upgraded-with-a-name-of-47-chars"
	if len(rs) != 47 {
		t.Fatalf("(test) RayService name is %d characters, want 47", len(rs))
	}
	poll := pollLiveHeads(t, ns, 200*time.Millisecond)
	stopPoll := func() (int, []string) { poll.Stop(); return poll.count(), poll.twoLive() }
	framework.Create(t, ns, framework.Manifest(t, currentServiceFixture, map[string]string{"NAME": rs}))
	services := c.Dynamic.Resource(rayServicesV1).Namespace(ns)
	pending := func() string {
		obj, err := services.Get(ctx, rs, metav1.GetOptions{})
		if err != nil {
			return ""
		}
		n, _, _ := unstructured.NestedString(obj.Object, "status", "pendingServiceStatus", "rayClusterName")
		return n
	}
	// waitNew waits until the pending cluster is not OLD and has a head stored.
	waitNew := func(old, what string) currentUpgradeCluster {
		t.Helper()
		var got currentUpgradeCluster
		framework.Eventually(t, 90*time.Second, 500*time.Millisecond, func() (bool, string) {
			p := pending()
			if p == "" || p == old {
				return false, fmt.Sprintf("%s: status.pendingServiceStatus.rayClusterName %q (old %q)", what, p, old)
			}
			heads := rayPods(t, ns, p, "head")
			if len(heads) == 0 {
				return false, fmt.Sprintf("%s: cluster %s has no head stored", what, p)
			}
			got = currentUpgradeCluster{Name: p}
			for _, h := range heads {
				got.Heads = append(got.Heads, h.Name)
			}
			return true, ""
		})
		// The owner is read now: a replaced cluster is deleted after 60 s.
		rc, err := c.Dynamic.Resource(rayClustersV1).Namespace(ns).Get(ctx, got.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("RayCluster %s: %v", got.Name, err)
		}
		if refs := rc.GetOwnerReferences(); len(refs) > 0 {
			got.Owner = refs[0].Kind + "/" + refs[0].Name
		}
		return got
	}
	c1 := waitNew("", "the first cluster")
	// The upgrade: a head rayStartParams entry changes the cluster hash, so
	// the operator prepares a new cluster in place of the pending one.
	if _, err := services.Patch(ctx, rs, types.MergePatchType,
		[]byte(`{"spec":{"rayClusterConfig":{"headGroupSpec":{"rayStartParams":{"num-cpus":"0"}}}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("patching RayService %s: %v", rs, err)
	}
	c2 := waitNew(c1.Name, "the new cluster after the spec change")
	// The forced collision: a pending name sharing c2's first 50 characters,
	// written as the operator writes it; the operator creates the cluster.
	if len(c2.Name) < 53 {
		t.Fatalf("cluster %s is %d characters, want 53", c2.Name, len(c2.Name))
	}
	tail := "x22"
	if c2.Name[50:53] == tail {
		tail = "v77"
	}
	c3name := c2.Name[:50] + tail
	if kubeRayHeadName(c3name) != kubeRayHeadName(c2.Name) {
		t.Fatalf("(test) KubeRay's names of %s and %s differ", c2.Name, c3name)
	}
	patch := fmt.Sprintf(`{"status":{"pendingServiceStatus":{"rayClusterName":%q}}}`, c3name)
	if _, err := services.Patch(ctx, rs, types.MergePatchType, []byte(patch), metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("patching status.pendingServiceStatus.rayClusterName of %s: %v", rs, err)
	}
	c3 := waitNew(c2.Name, "cluster "+c3name+" (KubeRay head name as "+c2.Name+"'s)")
	if c3.Name != c3name {
		t.Errorf("pending cluster %s after the status patch, want %s", c3.Name, c3name)
	}
	time.Sleep(3 * time.Second) // a few more polls after the last head
	polls, twoLive := stopPoll()

	for _, cl := range []currentUpgradeCluster{c1, c2, c3} {
		if len(cl.Heads) != 1 {
			t.Errorf("cluster %s: heads %v, want exactly one", cl.Name, cl.Heads)
			continue
		}
		h := cl.Heads[0]
		if len(h) > 63 {
			t.Errorf("cluster %s: head %s is %d characters, over 63", cl.Name, h, len(h))
		}
		if h == kubeRayHeadName(cl.Name) {
			t.Errorf("cluster %s: head %s is KubeRay's own name (the first 50 characters of the cluster's)", cl.Name, h)
		}
		if cl.Owner != "RayService/"+rs {
			t.Errorf("RayCluster %s: owner %q, want RayService/%s", cl.Name, cl.Owner, rs)
		}
	}
	if len(c1.Name) <= 50 || len(c2.Name) <= 50 {
		t.Errorf("cluster names %d/%d characters, not over 50", len(c1.Name), len(c2.Name))
	}
	if len(c1.Heads) > 0 && len(c2.Heads) > 0 && c2.Heads[0] == c1.Heads[0] {
		t.Errorf("the new head is named as the old one (%s)", c1.Heads[0])
	}
	if len(c2.Heads) > 0 && len(c3.Heads) > 0 && c3.Heads[0] == c2.Heads[0] {
		t.Errorf("the forced-collision head is named as %s's (%s)", c2.Name, c2.Heads[0])
	}
	// A head refused by the API server shows in the operator's log as
	// pods "NAME" already exists, quoted (pods \"NAME\") inside a JSON line.
	var refused []string
	for _, l := range framework.Lines(op.Process.Log, rs, " already exists") {
		if strings.Contains(l, `pods \"`) || strings.Contains(l, `pods "`) {
			refused = append(refused, l)
		}
	}
	if len(refused) > 0 {
		t.Errorf("the operator logged %d 'already exists' errors for %s's Pods:\n%s", len(refused), rs, strings.Join(refused, "\n"))
	}
	if len(twoLive) > 0 {
		t.Errorf("two live heads of one cluster at a poll: %v", twoLive)
	}
	if polls == 0 {
		t.Errorf("the heads were never listed")
	}
	for _, cl := range []currentUpgradeCluster{c1, c2, c3} {
		t.Logf("cluster %s: heads %v (KubeRay would name it %s)", cl.Name, cl.Heads, kubeRayHeadName(cl.Name))
	}
	t.Logf("live heads listed at %d polls, never two of one cluster", polls)
}
