package e2e

// TestLifecycle: KubeRay v1.6.2 runs its clusters through ray-webhook on a
// cluster whose Pods run (KWOK), each check in its own namespace.
//
//	cluster-ready           a RayCluster reaches status.state ready
//	head-replaced           its head Pod deleted, the operator's replacement is admitted once the
//	                        old one is gone: never two live heads (polled every 200 ms), no
//	                        "denied the request" Event, a new UID, Running
//	rayjob-submitter        a RayJob's submitter Pod is created by the Job controller and stored,
//	                        and ray-webhook never sees it (no ray.io/node-type label, so the Pod
//	                        webhook's objectSelector leaves it out): kube-apiserver counts exactly
//	                        one call of mutate.pods.ray-webhook.io per Ray Pod of the namespace and
//	                        none of validate-all-pods.ray-webhook.io, and ray-webhook logs one /admit
//	                        review per Ray Pod there
//	scale-0-300-0           a worker group scaled 0 -> 300 -> 0: 300 workers, each with one
//	                        FQ_RAY_IP (the operator's FQDN) and no duplicate env, all Running,
//	                        then all gone. Counted, not waited for: kube-apiserver counts exactly
//	                        300 calls of mutate.pods.ray-webhook.io on the way up (one per worker
//	                        created) and none on the way down, 0 rejected; the replica counts the
//	                        same 300 /admit answers, all 200, and 0 denials; the operator records
//	                        no FailedToCreateWorkerPod Event

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

// The webhooks of deploy/base/webhooks.yaml that can see a Pod, by their
// names there (kube-apiserver's metrics label its calls with them).
const (
	podWebhook     = "mutate.pods.ray-webhook.io"       // Ray Pods (ray.io/node-type head or worker), on /admit
	allPodsWebhook = "validate-all-pods.ray-webhook.io" // every other Pod, only in a namespace that opts in
)

// admissionReading is one reading of the counters of every call to
// ray-webhook: kube-apiserver's, and the shipped replica's own (the only
// replica the Service routes to in this suite, unless a test points
// EndpointSlice ray-webhook-e2e elsewhere; none of TestLifecycle does).
type admissionReading struct {
	apiserver framework.Scrape
	replica   framework.Scrape
}

func readAdmission(t testing.TB) admissionReading {
	t.Helper()
	c := framework.Attach(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var r admissionReading
	var err error
	if r.apiserver, err = framework.APIServerMetrics(ctx, c); err != nil {
		t.Fatalf("reading kube-apiserver's metrics: %v", err)
	}
	if r.replica, err = framework.ReplicaMetrics(ctx, c, c.WebhookIP, c.WebhookPort); err != nil {
		t.Fatalf("reading the metrics of the ray-webhook replica at %s:%d: %v", c.WebhookIP, c.WebhookPort, err)
	}
	return r
}

// admissionSince is what was counted between two readings.
type admissionSince struct {
	pods, allPods framework.WebhookCalls // kube-apiserver's, by webhook
	admit         float64                // the replica's /admit answers
	admitByCode   map[string]float64
	denials       map[string]float64 // the replica's ray_webhook_denials_total, by rule
	mutations     map[string]float64 // the replica's ray_webhook_mutations_total, by kind
}

func countAdmission(t testing.TB, before, after admissionReading) admissionSince {
	t.Helper()
	var d admissionSince
	var err error
	if d.pods, err = framework.WebhookCallsSince(before.apiserver, after.apiserver, podWebhook); err != nil {
		t.Fatalf("kube-apiserver's calls of %s: %v", podWebhook, err)
	}
	if d.allPods, err = framework.WebhookCallsSince(before.apiserver, after.apiserver, allPodsWebhook); err != nil {
		t.Fatalf("kube-apiserver's calls of %s: %v", allPodsWebhook, err)
	}
	admit := map[string]string{"webhook": "/admit"}
	const requests = "controller_runtime_webhook_requests_total"
	if d.admit, err = after.replica.Delta(before.replica, requests, admit); err == nil {
		d.admitByCode, err = after.replica.DeltaBy(before.replica, requests, "code", admit)
	}
	if err == nil {
		d.denials, err = after.replica.DeltaBy(before.replica, "ray_webhook_denials_total", "rule", nil)
	}
	if err == nil {
		d.mutations, err = after.replica.DeltaBy(before.replica, "ray_webhook_mutations_total", "kind", nil)
	}
	if err != nil {
		t.Fatalf("the ray-webhook replica's counters: %v", err)
	}
	return d
}

// apiserverReading is a reading of kube-apiserver's metrics.
func apiserverReading(t *testing.T) framework.Scrape {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := framework.APIServerMetrics(ctx, framework.Attach(t))
	if err != nil {
		t.Fatalf("reading kube-apiserver's metrics: %v", err)
	}
	return s
}

// podCallsSince is what kube-apiserver counted of the Pod webhook's calls
// between two readings.
func podCallsSince(t *testing.T, before, after framework.Scrape) framework.WebhookCalls {
	t.Helper()
	w, err := framework.WebhookCallsSince(before, after, podWebhook)
	if err != nil {
		t.Fatalf("kube-apiserver's calls of %s: %v", podWebhook, err)
	}
	return w
}

func (d admissionSince) replicaString() string {
	return fmt.Sprintf("%g /admit answers (by code %v), denials %v, mutations %v", d.admit, d.admitByCode, d.denials, d.mutations)
}

// checkPodCalls fails t unless kube-apiserver called the Pod webhook exactly
// WANT times, none rejected (a denial, or a call that failed under its
// failurePolicy Fail) and none failed open, and the replica answered each of
// those calls with 200 and denied none.
func checkPodCalls(t testing.TB, what string, d admissionSince, want int) {
	t.Helper()
	if d.pods.Calls != float64(want) || d.pods.Rejected != 0 || len(d.pods.Rejections) != 0 || d.pods.FailedOpen != 0 {
		t.Errorf("%s: kube-apiserver counted for %s %v; want exactly %d calls, 0 rejected, 0 failed open",
			what, podWebhook, d.pods, want)
	}
	if d.admit != d.pods.Calls || d.admitByCode["200"] != d.admit || len(d.denials) != 0 {
		t.Errorf("%s: the ray-webhook replica counted %s; want the %g calls kube-apiserver counted, all 200, no denial",
			what, d.replicaString(), d.pods.Calls)
	}
}

// failedCreations are the Events of namespace NS that say a Pod was not
// created: KubeRay v1.6.2 records FailedToCreateWorkerPod and
// FailedToCreateHeadPod (Warning, on the RayCluster) when its create of a
// Pod fails, whatever the cause, and the Job controller FailedCreate; any
// Event quoting a webhook's refusal counts too. Warning Events of one object
// are rate-limited by client-go's spam filter only past 25, and Normal ones
// (the 300 CreatedWorkerPod) take from a bucket of their own, so the first
// failure is always recorded. Also returns the count of every reason.
func failedCreations(t testing.TB, ns string) (failed []string, reasons map[string]int32) {
	t.Helper()
	c := framework.Attach(t)
	events, err := c.Kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("listing the Events of %s: %v", ns, err)
	}
	reasons = map[string]int32{}
	for _, e := range events.Items {
		n := e.Count
		if n == 0 {
			n = 1
		}
		reasons[e.Reason] += n
		switch {
		case e.Reason == "FailedToCreateWorkerPod", e.Reason == "FailedToCreateHeadPod", e.Reason == "FailedCreate",
			strings.Contains(e.Message, "denied the request"), strings.Contains(e.Message, "failed calling webhook"):
			failed = append(failed, fmt.Sprintf("%s %s %s/%s x%d: %s", e.Type, e.Reason, e.InvolvedObject.Kind,
				e.InvolvedObject.Name, n, e.Message))
		}
	}
	return failed, reasons
}

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
	before := readAdmission(t)
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

	// ray-webhook never sees the submitter: it has no ray.io/node-type
	// label, which the Pod webhook's objectSelector requires, and this
	// namespace has not opted in to validate-all-pods. So every call of the
	// Pod webhook from before the RayJob until the submitter was stored is
	// one of the RayJob cluster's Ray Pods, and the other Pod webhook was not
	// called. A reviewed submitter would be one call more.
	after := readAdmission(t)
	d := countAdmission(t, before, after)
	list, err := c.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "ray.io/node-type"})
	if err != nil {
		t.Fatalf("listing the Ray Pods of %s: %v", ns, err)
	}
	var rayNames []string
	for _, p := range list.Items {
		rayNames = append(rayNames, p.Name)
	}
	if l, ok := sub.Labels["ray.io/node-type"]; ok {
		t.Errorf("submitter Pod %s has ray.io/node-type=%q; this check is about a Pod without it", sub.Name, l)
	}
	checkPodCalls(t, "from the RayJob's creation until its submitter was stored", d, len(rayNames))
	if d.allPods.Calls != 0 {
		t.Errorf("kube-apiserver counted for %s %v; want 0 calls (namespace %s has not opted in)", allPodsWebhook, d.allPods, ns)
	}
	// The counters are cluster-wide; ray-webhook's log says which namespace
	// each review was for. A review's line can follow its answer by half a
	// second (WaitLines).
	reviewed := []string{"review path=/admit ", " namespace=" + ns + " "}
	framework.WaitLines(t, c.WebhookLog, len(rayNames), reviewed...)
	time.Sleep(time.Second)
	lines := framework.Lines(c.WebhookLog, reviewed...)
	if len(lines) != len(rayNames) {
		t.Errorf("ray-webhook logged %d /admit reviews in %s, want one per Ray Pod (%d: %v): %v",
			len(lines), ns, len(rayNames), rayNames, lines)
	}
	t.Logf("  submitter %s (labels %v): from the RayJob's creation until it was stored kube-apiserver counted for %s %v, for %s %g calls; the replica %s; %d Ray Pods in %s (%v), %d /admit reviews logged there",
		sub.Name, sub.Labels, podWebhook, d.pods, allPodsWebhook, d.allPods.Calls, d.replicaString(), len(rayNames), ns, rayNames, len(lines))
}

// workerFindings says which WORKERS lack exactly one FQ_RAY_IP equal to
// FQDN or hold a duplicate env name (the first ten, and how many more).
func workerFindings(workers []corev1.Pod, fqdn string) []string {
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
	if len(bad) > 10 {
		bad = append(bad[:10], fmt.Sprintf("... %d more", len(bad)-10))
	}
	return bad
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

	before := readAdmission(t)
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
	if bad := workerFindings(workers, fqdn); len(bad) > 0 {
		t.Fatalf("of %d workers, want each with exactly one FQ_RAY_IP=%s and no duplicate env: %v", n, fqdn, bad)
	}
	t.Logf("RayCluster %s/%s scaled 0 -> %d: %d workers stored after %v, all Running after %v; each has exactly one FQ_RAY_IP=%s and no duplicate env name",
		ns, name, n, n, storedAt.Round(100*time.Millisecond), runningAt.Round(100*time.Millisecond), fqdn)
	// One call per worker: the operator creates each of the 300 once when no
	// create fails, and the call is made once per create (no other mutating
	// webhook runs after it, so kube-apiserver never reinvokes it). A denied
	// or failed create that the operator retried shows up as a call more and
	// as a rejection, even when every worker ends up Running.
	up := readAdmission(t)
	upCalls := countAdmission(t, before, up)
	checkPodCalls(t, fmt.Sprintf("scaling 0 -> %d", n), upCalls, n)
	t.Logf("  scaled 0 -> %d: kube-apiserver counted for %s %v; the replica %s", n, podWebhook, upCalls.pods, upCalls.replicaString())

	start = time.Now()
	scale(0)
	framework.Eventually(t, 10*time.Minute, 2*time.Second, func() (bool, string) {
		left := rayPods(t, ns, name, "worker")
		return len(left) == 0, fmt.Sprintf("%d workers still stored", len(left))
	})
	heads := rayPods(t, ns, name, "head")
	t.Logf("  scaled %d -> 0: every worker gone after %v; %d head Pod(s) stored", n, time.Since(start).Round(100*time.Millisecond), len(heads))
	// Deleting is no CREATE: the Pod webhook is not called at all.
	downCalls := countAdmission(t, up, readAdmission(t))
	checkPodCalls(t, fmt.Sprintf("scaling %d -> 0", n), downCalls, 0)
	failed, reasons := failedCreations(t, ns)
	if len(failed) > 0 {
		t.Errorf("Events of failed creations in %s while scaling 0 -> %d -> 0: %v", ns, n, failed)
	}
	t.Logf("  scaled %d -> 0: kube-apiserver counted for %s %v; the replica %s; Events in %s by reason %v (%d of a failed creation)",
		n, podWebhook, downCalls.pods, downCalls.replicaString(), ns, reasons, len(failed))
}
