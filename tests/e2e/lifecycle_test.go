package e2e

// TestLifecycle: KubeRay v1.6.2 runs its clusters through ray-webhook on a
// cluster whose Pods run (KWOK), each check in its own namespace.
//
//	cluster-ready           a RayCluster reaches status.state ready
//	head-replaced           its head Pod deleted, the operator's replacement is admitted once the
//	                        old one is gone: never two live heads (polled every 200 ms), no
//	                        "denied the request" Event, a new UID, Running
//	rayjob-submitter        a RayJob's submitter Pod is created by the Job controller and stored
//	scale-0-300-0           a worker group scaled 0 -> 300 -> 0: 300 workers, each with one
//	                        FQ_RAY_IP (the operator's FQDN) and no duplicate env, all Running,
//	                        then all gone

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"ray-webhook/tests/e2e/framework"
)

var rayClustersV1 = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}

const rayJobFixture = "testdata/rayjob-v1.yaml"

func TestLifecycle(t *testing.T) {
	framework.Attach(t)
	framework.Operator(t, releaseCurrent)
	t.Run("cluster-ready", testClusterReady)
	t.Run("head-replaced", testHeadReplaced)
	t.Run("rayjob-submitter", testRayJobSubmitter)
	// Last: KWOK hands out Pod addresses past a /24 POD_CIDR for 300 workers.
	t.Run("scale-0-300-0", testScale)
}

// clusterState is status.state of RayCluster NS/NAME ("" before the operator writes it).
func clusterState(t testing.TB, ns, name string) (string, *unstructured.Unstructured) {
	t.Helper()
	c := framework.Attach(t)
	rc, err := c.Dynamic.Resource(rayClustersV1).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting RayCluster %s/%s: %v", ns, name, err)
	}
	state, _, _ := unstructured.NestedString(rc.Object, "status", "state")
	return state, rc
}

func waitState(t testing.TB, ns, name, want string, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, time.Second, func() (bool, string) {
		state, rc := clusterState(t, ns, name)
		ready, _, _ := unstructured.NestedInt64(rc.Object, "status", "readyWorkerReplicas")
		return state == want, fmt.Sprintf("RayCluster %s/%s status.state %q (readyWorkerReplicas %d), want %q", ns, name, state, ready, want)
	})
}

func testClusterReady(t *testing.T) {
	ns := framework.NewNamespace(t, "e2e-life-ready")
	const name = "rc-ready"
	start := time.Now()
	createCluster(t, ns, currentFixture, name, map[string]string{"REPLICAS": "1", "MAX_REPLICAS": "2"})
	waitState(t, ns, name, "ready", 3*time.Minute)
	rc := waitRunning(t, ns, name, 1, time.Minute)
	t.Logf("RayCluster %s/%s: status.state ready after %v; head %s Running at %s on %s, worker %s %s",
		ns, name, time.Since(start).Round(100*time.Millisecond), rc.Head.Name, rc.Head.Status.PodIP, rc.Head.Spec.NodeName,
		rc.Workers[0].Name, rc.Workers[0].Status.Phase)
}

// headWatch polls the live heads of one cluster every 200 ms until stopped.
type headWatch struct {
	mu       sync.Mutex
	polls    int
	maxLive  int
	twoLive  []string // what was seen when more than one head was live
	errs     int
	lastErr  error
	oldGone  time.Time // first poll that no longer saw the old UID
	overlap  []string  // polls that saw the old head stored beside another one
	stop     chan struct{}
	finished chan struct{}
}

func watchHeads(c *framework.Cluster, ns, cluster string, oldUID types.UID) *headWatch {
	w := &headWatch{stop: make(chan struct{}), finished: make(chan struct{})}
	go func() {
		defer close(w.finished)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			list, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
				LabelSelector: "ray.io/cluster=" + cluster + ",ray.io/node-type=head"})
			cancel()
			w.mu.Lock()
			w.polls++
			if err != nil {
				w.errs++
				w.lastErr = err
			} else {
				var liveNames, others []string
				oldSeen := false
				for i := range list.Items {
					p := &list.Items[i]
					if p.UID == oldUID {
						oldSeen = true
					} else {
						others = append(others, fmt.Sprintf("%s(uid %s)", p.Name, p.UID))
					}
					if live(p) {
						liveNames = append(liveNames, fmt.Sprintf("%s(uid %s, %s)", p.Name, p.UID, p.Status.Phase))
					}
				}
				if len(liveNames) > w.maxLive {
					w.maxLive = len(liveNames)
				}
				if len(liveNames) > 1 && len(w.twoLive) < 5 {
					w.twoLive = append(w.twoLive, time.Now().Format("15:04:05.000")+" "+strings.Join(liveNames, ", "))
				}
				if oldSeen && len(others) > 0 && len(w.overlap) < 5 {
					w.overlap = append(w.overlap, time.Now().Format("15:04:05.000")+" old head beside "+strings.Join(others, ", "))
				}
				if !oldSeen && w.oldGone.IsZero() {
					w.oldGone = time.Now()
				}
			}
			w.mu.Unlock()
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return w
}

func (w *headWatch) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.finished
}

func testHeadReplaced(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-life-head")
	const name = "rc-head"
	createCluster(t, ns, currentFixture, name, map[string]string{"REPLICAS": "1", "MAX_REPLICAS": "2"})
	waitState(t, ns, name, "ready", 3*time.Minute)
	old := waitRunning(t, ns, name, 1, time.Minute).Head

	watch := watchHeads(c, ns, name, old.UID)
	t.Cleanup(watch.Stop)
	time.Sleep(400 * time.Millisecond) // a poll or two of the state before
	deleted := time.Now()
	if err := c.Kube.CoreV1().Pods(ns).Delete(context.Background(), old.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting head %s/%s: %v", ns, old.Name, err)
	}
	var repl corev1.Pod
	framework.Eventually(t, 3*time.Minute, 200*time.Millisecond, func() (bool, string) {
		var seen []string
		for _, p := range rayPods(t, ns, name, "head") {
			seen = append(seen, fmt.Sprintf("%s uid %s %s deleting=%v", p.Name, p.UID, p.Status.Phase, p.DeletionTimestamp != nil))
			if p.UID != old.UID && live(&p) && p.Status.Phase == corev1.PodRunning {
				repl = p
			}
		}
		if repl.UID == "" {
			return false, fmt.Sprintf("no Running replacement of head %s (uid %s) yet; heads stored: %v", old.Name, old.UID, seen)
		}
		if len(seen) != 1 {
			return false, fmt.Sprintf("replacement %s Running, but heads stored: %v", repl.Name, seen)
		}
		return true, ""
	})
	time.Sleep(time.Second) // a few more polls with the replacement alone
	watch.Stop()

	watch.mu.Lock()
	polls, maxLive, twoLive, errs, lastErr, oldGone, overlap := watch.polls, watch.maxLive, watch.twoLive, watch.errs, watch.lastErr, watch.oldGone, watch.overlap
	watch.mu.Unlock()
	if errs > polls/10 {
		t.Errorf("%d of %d polls of the live heads failed (last: %v)", errs, polls, lastErr)
	}
	if maxLive > 1 {
		t.Errorf("two live heads of %s/%s at once: %v", ns, name, twoLive)
	}
	events, err := c.Kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing the Events of %s: %v", ns, err)
	}
	for _, e := range events.Items {
		if strings.Contains(e.Message, "denied the request") {
			t.Errorf("Event %s %s/%s %s: %s", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	if repl.UID == old.UID {
		t.Fatalf("the replacement has the old UID %s", old.UID)
	}
	if len(overlap) > 0 {
		t.Errorf("the replacement was stored while the old head %s (uid %s) still was: %v", old.Name, old.UID, overlap)
	}
	t.Logf("head %s/%s (uid %s) deleted; replacement %s (uid %s) created %s, Running at %s %v after the delete",
		ns, old.Name, old.UID, repl.Name, repl.UID, repl.CreationTimestamp.UTC().Format("15:04:05"), repl.Status.PodIP,
		time.Since(deleted).Round(100*time.Millisecond))
	t.Logf("  %d polls every 200 ms: at most %d live head(s), never the old and the new one stored together; old head gone %v after the delete; %d Events in %s, none \"denied the request\"",
		polls, maxLive, oldGone.Sub(deleted).Round(100*time.Millisecond), len(events.Items), ns)
}

func testRayJobSubmitter(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-life-job")
	const name = "job-e2e"
	framework.Create(t, ns, framework.Manifest(t, rayJobFixture, map[string]string{"NAME": name}))
	var sub corev1.Pod
	var owner metav1.OwnerReference
	framework.Eventually(t, 4*time.Minute, time.Second, func() (bool, string) {
		job, err := c.Kube.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, fmt.Sprintf("no submitter Job %s/%s yet (the operator makes it once the RayJob's cluster is ready)", ns, name)
		}
		if err != nil {
			return false, err.Error()
		}
		pods, err := c.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range pods.Items {
			for _, o := range p.OwnerReferences {
				if o.APIVersion == "batch/v1" && o.Kind == "Job" && o.Name == job.Name && o.UID == job.UID {
					sub, owner = p, o
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("Job %s/%s (active %d, failed %d, conditions %v): no Pod owned by it among %d Pods",
			ns, name, job.Status.Active, job.Status.Failed, job.Status.Conditions, len(pods.Items))
	})
	var jobOwner string
	if job, err := c.Kube.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{}); err == nil {
		for _, o := range job.OwnerReferences {
			jobOwner = o.Kind + " " + o.Name
		}
	}
	if sub.UID == "" || sub.CreationTimestamp.IsZero() {
		t.Fatalf("submitter Pod %s/%s not stored", ns, sub.Name)
	}
	t.Logf("RayJob %s/%s: submitter Pod %s stored (uid %s, phase %s), owner %s %s %s, which is owned by %s",
		ns, name, sub.Name, sub.UID, sub.Status.Phase, owner.APIVersion, owner.Kind, owner.Name, jobOwner)
}

func testScale(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-life-scale")
	const name = "rc-scale"
	const n = 300
	createCluster(t, ns, currentFixture, name, map[string]string{"REPLICAS": "0", "MAX_REPLICAS": fmt.Sprint(n)})
	waitState(t, ns, name, "ready", 3*time.Minute)
	fqdn := fmt.Sprintf("%s.%s.svc.%s", headService(name), ns, c.ClusterDomain)
	scale := func(replicas int) {
		patch := fmt.Sprintf(`[{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": %d}]`, replicas)
		if _, err := c.Dynamic.Resource(rayClustersV1).Namespace(ns).Patch(context.Background(), name,
			types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatalf("scaling RayCluster %s/%s to %d workers: %v", ns, name, replicas, err)
		}
	}

	start := time.Now()
	scale(n)
	var workers []corev1.Pod
	var storedAt time.Duration
	framework.Eventually(t, 10*time.Minute, 2*time.Second, func() (bool, string) {
		workers = rayPods(t, ns, name, "worker")
		running := 0
		for i := range workers {
			if workers[i].Status.Phase == corev1.PodRunning && live(&workers[i]) {
				running++
			}
		}
		if len(workers) == n && storedAt == 0 {
			storedAt = time.Since(start)
		}
		return len(workers) == n && running == n, fmt.Sprintf("%d workers stored, %d Running, want %d", len(workers), running, n)
	})
	runningAt := time.Since(start)
	var bad []string
	for i := range workers {
		w := &workers[i]
		if v := envValues(w.Spec.Containers[0], "FQ_RAY_IP"); len(v) != 1 || v[0] != fqdn {
			bad = append(bad, fmt.Sprintf("%s: FQ_RAY_IP %q", w.Name, v))
		}
		for _, d := range duplicateEnv(w) {
			bad = append(bad, fmt.Sprintf("%s: duplicate env %s", w.Name, d))
		}
	}
	if len(bad) > 0 {
		if len(bad) > 10 {
			bad = append(bad[:10], fmt.Sprintf("... %d more", len(bad)-10))
		}
		t.Fatalf("of %d workers, want each with exactly one FQ_RAY_IP=%s and no duplicate env: %v", n, fqdn, bad)
	}
	t.Logf("RayCluster %s/%s scaled 0 -> %d: %d workers stored after %v, all Running after %v; each has exactly one FQ_RAY_IP=%s and no duplicate env name",
		ns, name, n, n, storedAt.Round(100*time.Millisecond), runningAt.Round(100*time.Millisecond), fqdn)

	start = time.Now()
	scale(0)
	framework.Eventually(t, 10*time.Minute, 2*time.Second, func() (bool, string) {
		left := rayPods(t, ns, name, "worker")
		return len(left) == 0, fmt.Sprintf("%d workers still stored", len(left))
	})
	heads := rayPods(t, ns, name, "head")
	t.Logf("  scaled %d -> 0: every worker gone after %v; %d head Pod(s) stored", n, time.Since(start).Round(100*time.Millisecond), len(heads))
}
