package e2e

// TestReplicaFaults: a ray-webhook replica lost or rolled while KubeRay
// v1.6.2 scales a RayCluster's worker group 0 -> 300, each check in its own
// namespace. Two replicas serve behind the Service, on the same port (an
// EndpointSlice has one port list). Every failed call is read from
// kube-apiserver's own counters for mutate.pods.ray-webhook.io
// (apiserver_admission_webhook_request_total and _rejection_count) and from
// the operator's Events (FailedToCreateWorkerPod); the operator retries a
// failed creation, so the final state must be exact in both: 300 workers,
// each with exactly one FQ_RAY_IP equal to the head Service's FQDN and no
// duplicate env name, and one live head. Both scale back to 0.
//
//	sigkill-mid-scale           the shipped replica (WEBHOOK_IP) and replica B (WEBHOOK_IP2); once
//	                            100 workers are stored, B gets SIGKILL and, as the kubelet restarts
//	                            a container that died, is started again at once and marked ready by
//	                            its readinessProbe. Bound: a failed call is one in flight on B at the
//	                            kill (the operator creates one Pod at a time: at most 1) or one that
//	                            dialled B's address before its new process listened (at most the
//	                            creations the operator made in that window, measured: its rate over
//	                            the scale times the window, rounded up). Asserted: failed calls <= 1 +
//	                            that; every failed call is a calling_webhook_error (never a denial,
//	                            never failed open); calls = 300 + failed (each failed creation is
//	                            retried once more); FailedToCreateWorkerPod Events = failed calls;
//	                            the kill fell mid-scale, and both replicas served reviews, B again
//	                            after its return when its readinessProbe brought it back before the
//	                            scale ended (logged when not)
//	graceful-rollout-mid-scale  replicas B (WEBHOOK_IP2) and C (DNS_IP2), both started by the test
//	                            (the shipped replica belongs to the bring-up, which a test cannot
//	                            restart), the Service routed to the two; from the first worker
//	                            stored on, each in turn as a Deployment rolls it: SIGTERM, its
//	                            endpoint marked not ready 0.5 s later (the kubelet's SIGTERM and the
//	                            endpoint controller's update race), drain, exit, started again, ready
//	                            by its readinessProbe (its next period, 5 s, when the first probe
//	                            comes before the server listens); then the other one, with the
//	                            Deployment's arguments (--drain-delay=5s). The rollouts outlast the
//	                            scale, so tests/e2e/cmd/podload creates 20 Ray worker Pods a second
//	                            in a namespace of its own through both. Asserted: B's SIGTERM fell
//	                            mid-scale, the load outlasted both rollouts and none of its creations
//	                            failed; kube-apiserver counted exactly 300 + the load's Pods calls,
//	                            all code 200, 0 rejected, 0 failed open; no failed-creation Event;
//	                            both replicas served reviews of the RayCluster

import (
	"context"
	"fmt"
	"math"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"ray-webhook/tests/e2e/framework"
)

const faultWorkers = 300

func TestReplicaFaults(t *testing.T) {
	framework.Attach(t)
	framework.Operator(t, releaseCurrent)
	t.Run("sigkill-mid-scale", testSigkillMidScale)
	t.Run("graceful-rollout-mid-scale", testGracefulRolloutMidScale)
}

// faultScale is one RayCluster of the current operator, ready with 0 workers.
type faultScale struct {
	ns, name, fqdn string
}

func newFaultScale(t *testing.T, prefix string) faultScale {
	t.Helper()
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, prefix)
	const name = "rc-fault"
	createCluster(t, ns, currentFixture, name, map[string]string{"REPLICAS": "0", "MAX_REPLICAS": fmt.Sprint(faultWorkers)})
	waitState(t, ns, name, "ready", 3*time.Minute)
	return faultScale{ns: ns, name: name, fqdn: fmt.Sprintf("%s.%s.svc.%s", headService(name), ns, c.ClusterDomain)}
}

func (s faultScale) scale(t *testing.T, replicas int) {
	t.Helper()
	c := framework.Attach(t)
	patch := fmt.Sprintf(`[{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": %d}]`, replicas)
	if _, err := c.Dynamic.Resource(rayClustersV1).Namespace(s.ns).Patch(context.Background(), s.name,
		types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("scaling RayCluster %s/%s to %d workers: %v", s.ns, s.name, replicas, err)
	}
}

// stored is how many workers are stored now.
func (s faultScale) stored(t *testing.T) int {
	t.Helper()
	c := framework.Attach(t)
	list, err := c.Kube.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: "ray.io/cluster=" + s.name + ",ray.io/node-type=worker", ResourceVersion: "0"})
	if err != nil {
		t.Fatalf("listing the workers of %s/%s: %v", s.ns, s.name, err)
	}
	return len(list.Items)
}

// waitStored waits until at least N workers are stored and says how many.
func (s faultScale) waitStored(t *testing.T, n int) int {
	t.Helper()
	var got int
	framework.Eventually(t, 2*time.Minute, 50*time.Millisecond, func() (bool, string) {
		got = s.stored(t)
		return got >= n, fmt.Sprintf("%d workers of %s/%s stored, waiting for %d", got, s.ns, s.name, n)
	})
	return got
}

// waitAll waits until all workers are stored and Running, and says how long
// after START they were all stored.
func (s faultScale) waitAll(t *testing.T, start time.Time) (storedAt, runningAt time.Duration) {
	t.Helper()
	framework.Eventually(t, 10*time.Minute, 200*time.Millisecond, func() (bool, string) {
		workers := rayPods(t, s.ns, s.name, "worker")
		running := 0
		for i := range workers {
			if workers[i].Status.Phase == corev1.PodRunning && live(&workers[i]) {
				running++
			}
		}
		if len(workers) == faultWorkers && storedAt == 0 {
			storedAt = time.Since(start)
		}
		return len(workers) == faultWorkers && running == faultWorkers,
			fmt.Sprintf("%d workers stored, %d Running, want %d", len(workers), running, faultWorkers)
	})
	return storedAt, time.Since(start)
}

// checkFinal fails t unless exactly 300 workers are stored, each mutated
// once (one FQ_RAY_IP, the head Service's FQDN; no duplicate env name), and
// exactly one head, live.
func (s faultScale) checkFinal(t *testing.T) {
	t.Helper()
	workers := rayPods(t, s.ns, s.name, "worker")
	if len(workers) != faultWorkers {
		t.Errorf("%d workers stored, want exactly %d", len(workers), faultWorkers)
	}
	if bad := workerFindings(workers, s.fqdn); len(bad) > 0 {
		t.Errorf("of %d workers, want each with exactly one FQ_RAY_IP=%s and no duplicate env: %v", len(workers), s.fqdn, bad)
	}
	heads := rayPods(t, s.ns, s.name, "head")
	if len(heads) != 1 || !live(&heads[0]) {
		var seen []string
		for _, h := range heads {
			seen = append(seen, fmt.Sprintf("%s %s deleting=%v", h.Name, h.Status.Phase, h.DeletionTimestamp != nil))
		}
		t.Errorf("heads of %s/%s: %v, want exactly one live head", s.ns, s.name, seen)
	}
}

// watchStored polls the stored workers every 100 ms from now on; the
// function it returns says how long after START all of them were first
// seen stored (0: not yet).
func (s faultScale) watchStored(t *testing.T, start time.Time) func() time.Duration {
	t.Helper()
	c := framework.Attach(t)
	var mu sync.Mutex
	var at time.Duration
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			list, err := c.Kube.CoreV1().Pods(s.ns).List(context.Background(), metav1.ListOptions{
				LabelSelector: "ray.io/cluster=" + s.name + ",ray.io/node-type=worker", ResourceVersion: "0"})
			if err == nil && len(list.Items) >= faultWorkers {
				mu.Lock()
				at = time.Since(start)
				mu.Unlock()
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })
	return func() time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return at
	}
}

// faultLoad runs tests/e2e/cmd/podload in NS for SECONDS at RATE creations
// a second (2 clients), Ray worker Pods never scheduled.
func faultLoad(t *testing.T, ns string, seconds, rate int) *availabilityLoad {
	t.Helper()
	return startPodload(t, ns, seconds, 2, rate, seconds*rate)
}

// scaleDown scales back to 0 and waits for every worker to go.
func (s faultScale) scaleDown(t *testing.T) {
	t.Helper()
	s.scale(t, 0)
	framework.Eventually(t, 10*time.Minute, time.Second, func() (bool, string) {
		left := s.stored(t)
		return left == 0, fmt.Sprintf("%d workers still stored", left)
	})
}

// readyzOK waits until GET /readyz on the probe port IP:PORT answers 200
// (what the readinessProbe asks) and says when.
func readyzOK(ip string, port int, timeout time.Duration) (time.Time, bool) {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	url := "http://" + net.JoinHostPort(ip, strconv.Itoa(port)) + "/readyz"
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(2 * time.Millisecond) {
		resp, err := client.Get(url)
		if err != nil {
			continue
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			return time.Now(), true
		}
	}
	return time.Time{}, false
}

// listening waits until something accepts TCP on IP:PORT and says when.
func listening(ip string, port int, timeout time.Duration) (time.Time, bool) {
	deadline := time.Now().Add(timeout)
	addr := net.JoinHostPort(ip, strconv.Itoa(port))
	for time.Now().Before(deadline) {
		conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return time.Now(), true
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Time{}, false
}

func testSigkillMidScale(t *testing.T) {
	c := framework.Attach(t)
	s := newFaultScale(t, "e2e-fault-kill")
	b := availabilityTwoReplicas(t)
	reviewed := []string{"review path=/admit ", " namespace=" + s.ns + " "}

	before := apiserverReading(t)
	start := time.Now()
	s.scale(t, faultWorkers)
	atKill := s.waitStored(t, 100)

	killed := b.Current()
	killedLog := killed.Log
	killAt := time.Now()
	if err := syscall.Kill(killed.Pid(), syscall.SIGKILL); err != nil {
		t.Fatalf("SIGKILL to replica B (pid %d): %v", killed.Pid(), err)
	}
	for !killed.Exited() {
		if time.Since(killAt) > 10*time.Second {
			t.Fatalf("replica B (pid %d) still runs 10 s after SIGKILL", killed.Pid())
		}
		time.Sleep(time.Millisecond)
	}
	exitedAt := time.Now()
	// The kubelet starts a container that died again at once (no back-off
	// before the first restart); its readinessProbe marks it ready.
	up := make(chan time.Time, 1)
	go func() {
		at, _ := listening(b.IP, b.Port, 30*time.Second)
		up <- at
	}()
	b.Start(t)
	readyAt, ok := readyzOK(b.IP, b.ProbePort, 30*time.Second)
	if !ok {
		t.Fatalf("replica B's new process: /readyz on %s:%d never answered 200", b.IP, b.ProbePort)
	}
	listenAt := <-up
	framework.WaitEndpointReady(t, framework.ServiceSlice, b.IP, true, 10*time.Second)
	storedAtReady := s.stored(t)

	storedAt, runningAt := s.waitAll(t, start)
	// A review's log line can follow its answer by half a second.
	time.Sleep(time.Second)
	after := apiserverReading(t)
	s.checkFinal(t)

	w := podCallsSince(t, before, after)
	failed := w.Calls - w.ByCode["200"]
	var denials, callErrors float64
	for k, v := range w.Rejections {
		if len(k) >= 9 && k[:9] == "no_error/" {
			denials += v
		}
		if len(k) >= 22 && k[:22] == "calling_webhook_error/" {
			callErrors += v
		}
	}
	failedEvents, reasons := failedCreations(t, s.ns)

	if listenAt.IsZero() {
		t.Fatalf("replica B's new process never accepted a connection on %s:%d", b.IP, b.Port)
	}
	window := listenAt.Sub(killAt)
	rate := float64(faultWorkers) / storedAt.Seconds()
	bound := 1 + int(math.Ceil(rate*window.Seconds()))
	onBefore := framework.CountLines(killedLog, reviewed...)
	onAfter := framework.CountLines(b.Current().Log, reviewed...)
	onShipped := framework.CountLines(c.WebhookLog, reviewed...)

	t.Logf("RayCluster %s/%s scaled 0 -> %d: SIGKILL of replica B (pid %d) with %d workers stored; exited after %v; new process listening %v and ready %v after the kill (%d workers stored then); all stored after %v, all Running after %v",
		s.ns, s.name, faultWorkers, killed.Pid(), atKill, exitedAt.Sub(killAt).Round(time.Millisecond),
		window.Round(time.Millisecond), readyAt.Sub(killAt).Round(time.Millisecond), storedAtReady,
		storedAt.Round(100*time.Millisecond), runningAt.Round(100*time.Millisecond))
	t.Logf("  kube-apiserver counted for %s %v: %g failed (%g calling_webhook_error, %g denials); bound 1 in flight + %.0f creations/s x %v window = %d",
		podWebhook, w, failed, callErrors, denials, rate, window.Round(time.Millisecond), bound)
	t.Logf("  Events in %s by reason %v; failed creations: %v", s.ns, reasons, failedEvents)
	t.Logf("  reviews logged for %s: shipped replica %d, replica B before the kill %d (lines still buffered at SIGKILL are lost), after %d",
		s.ns, onShipped, onBefore, onAfter)

	if atKill >= faultWorkers {
		t.Errorf("the kill fell after the scale (%d workers stored): nothing was proven mid-scale", atKill)
	}
	// B's place in the Service comes back with its readinessProbe (up to a
	// period, 5 s); a fast operator can finish the scale before. The cost of
	// the kill is counted either way; only then B serves nothing of it.
	backMidScale := storedAtReady < faultWorkers
	if !backMidScale {
		t.Logf("  all %d workers were stored before replica B was back in the Service's endpoints: its return came after the scale", faultWorkers)
	}
	if failed != w.Rejected || failed != callErrors || denials != 0 || w.FailedOpen != 0 {
		t.Errorf("want every failed call a calling_webhook_error that failed its creation (failurePolicy Fail), none denied, none failed open; kube-apiserver counted %v", w)
	}
	if failed > float64(bound) {
		t.Errorf("%g calls failed, more than the bound %d (1 in flight at the kill + %.0f creations/s x %v until B's new process listened)",
			failed, bound, rate, window.Round(time.Millisecond))
	}
	if w.Calls != faultWorkers+failed {
		t.Errorf("kube-apiserver counted %g calls, want %d creations + %g failed ones retried = %g", w.Calls, faultWorkers, failed, faultWorkers+failed)
	}
	if n := reasons["FailedToCreateWorkerPod"]; float64(n) != failed || reasons["FailedToCreateHeadPod"] != 0 {
		t.Errorf("the operator recorded %d FailedToCreateWorkerPod and %d FailedToCreateHeadPod Events, want one per failed call (%g) and none of a head: %v",
			n, reasons["FailedToCreateHeadPod"], failed, failedEvents)
	}
	if onShipped == 0 || (backMidScale && onAfter == 0) {
		t.Errorf("both replicas should have served reviews, B again after its return mid-scale: shipped %d, B after %d", onShipped, onAfter)
	}

	downStart := time.Now()
	s.scaleDown(t)
	t.Logf("  scaled %d -> 0 in %v", faultWorkers, time.Since(downStart).Round(100*time.Millisecond))
}

// rollStep is one replica's graceful rollout.
type rollStep struct {
	name                   string
	storedAtTerm           int
	drained, ready         time.Duration // SIGTERM to exit, SIGTERM to ready again
	reviewsOld, reviewsNew int           // counted once the scale is done
	oldLog                 string
	replica                *framework.Replica
}

func testGracefulRolloutMidScale(t *testing.T) {
	c := framework.Attach(t)
	s := newFaultScale(t, "e2e-fault-roll")
	reviewed := []string{"review path=/admit ", " namespace=" + s.ns + " "}
	b := framework.StartReplica(t, framework.ReplicaOptions{Name: "ray-webhook-b", Port: c.WebhookPort,
		Route: framework.RouteNone})
	cr := framework.StartPeerReplica(t, framework.ReplicaOptions{Name: "ray-webhook-c", IP: c.DNSIP2, Port: c.WebhookPort,
		Route: framework.RouteNone})
	framework.PointSlice(t, c.WebhookPort, framework.Endpoint{IP: b.IP, Ready: true}, framework.Endpoint{IP: cr.IP, Ready: true})
	framework.RoutedTo(t, b.Process.Log)
	framework.RoutedTo(t, cr.Process.Log)

	roll := func(r, other *framework.Replica, name string) rollStep {
		st := rollStep{name: name, storedAtTerm: s.stored(t)}
		oldLog := r.Current().Log
		term := time.Now()
		stopped := make(chan struct{})
		go func() { r.Stop(); close(stopped) }()
		time.Sleep(500 * time.Millisecond)
		framework.PointSlice(t, c.WebhookPort,
			framework.Endpoint{IP: r.IP, Ready: false}, framework.Endpoint{IP: other.IP, Ready: true})
		<-stopped
		st.drained = time.Since(term)
		r.Start(t)
		framework.WaitEndpointReady(t, framework.ServiceSlice, r.IP, true, 10*time.Second)
		st.ready = time.Since(term)
		st.oldLog, st.replica = oldLog, r
		return st
	}

	// The second rollout outlasts the scale (each replica comes back ready
	// at its readinessProbe's next period, 5 s), so a steady load of Ray
	// worker Pods in a namespace of its own runs through both.
	loadNS := framework.NewNamespace(t, "e2e-fault-roll-load")
	before := apiserverReading(t)
	load := faultLoad(t, loadNS, 35, 20)
	start := time.Now()
	s.scale(t, faultWorkers)
	allStored := s.watchStored(t, start)
	s.waitStored(t, 1)
	steps := []rollStep{roll(b, cr, "B"), roll(cr, b, "C")}
	rolledAt := time.Since(start)
	covered := load.running()
	storedAtRolled := s.stored(t)
	_, runningAt := s.waitAll(t, start)
	storedAt := allStored()
	lr := load.wait(t)
	// A review's log line can follow its answer by half a second.
	time.Sleep(time.Second)
	after := apiserverReading(t)
	s.checkFinal(t)
	w := podCallsSince(t, before, after)
	failedEvents, reasons := failedCreations(t, s.ns)

	for i := range steps {
		steps[i].reviewsOld = framework.CountLines(steps[i].oldLog, reviewed...)
		steps[i].reviewsNew = framework.CountLines(steps[i].replica.Current().Log, reviewed...)
	}
	for _, st := range steps {
		t.Logf("replica %s: SIGTERM with %d workers stored, exited %v later, ready again %v later; reviews of %s: %d before, %d after",
			st.name, st.storedAtTerm, st.drained.Round(time.Millisecond), st.ready.Round(time.Millisecond), s.ns, st.reviewsOld, st.reviewsNew)
	}
	t.Logf("RayCluster %s/%s scaled 0 -> %d: both replicas rolled after %v (%d workers stored then); all stored after %v, all Running after %v",
		s.ns, s.name, faultWorkers, rolledAt.Round(100*time.Millisecond), storedAtRolled, storedAt.Round(100*time.Millisecond), runningAt.Round(100*time.Millisecond))
	t.Logf("  steady load in %s: created %d, failed %d in %.1f s; it outlasted both rollouts: %v",
		loadNS, lr.Created, lr.Failed, lr.Seconds, covered)
	t.Logf("  kube-apiserver counted for %s %v (%d workers + %d Pods of the load); Events in %s by reason %v",
		podWebhook, w, faultWorkers, lr.Created, s.ns, reasons)

	for _, st := range steps {
		if st.reviewsOld+st.reviewsNew == 0 {
			t.Errorf("replica %s served no Pod review of %s", st.name, s.ns)
		}
	}
	if steps[0].storedAtTerm >= faultWorkers {
		t.Errorf("replica B got SIGTERM after the scale (%d workers stored): its rollout was not mid-scale", steps[0].storedAtTerm)
	}
	if !covered {
		t.Errorf("the steady load ended before both replicas were rolled: the second rollout was not under load")
	}
	if lr.Created == 0 || lr.Failed != 0 {
		t.Errorf("steady load: created %d, failed %d: %s", lr.Created, lr.Failed, truncate(string(lr.Failures), 400))
	}
	want := float64(faultWorkers + lr.Created)
	if w.Calls != want || w.ByCode["200"] != want || w.Rejected != 0 || len(w.Rejections) != 0 || w.FailedOpen != 0 {
		t.Errorf("a graceful rollout must fail no call: kube-apiserver counted for %s %v; want exactly %g calls (%d workers + %d Pods of the load), all 200, 0 rejected, 0 failed open",
			podWebhook, w, want, faultWorkers, lr.Created)
	}
	if len(failedEvents) > 0 {
		t.Errorf("Events of failed creations in %s during the rollout: %v", s.ns, failedEvents)
	}

	downStart := time.Now()
	s.scaleDown(t)
	t.Logf("  scaled %d -> 0 in %v", faultWorkers, time.Since(downStart).Round(100*time.Millisecond))
}
