package e2e

// TestRealRay's lifecycle checks on the default cluster domain, with every
// Pod of the cluster (and the RayJob's submitter) run by RayPods:
//
//	v1.6.2/rayjob-real-submitter  a RayJob in K8sJobMode: the submitter Pod runs the operator's own
//	                              `ray job submit` to the dashboard's FQDN; the RayJob reaches
//	                              SUCCEEDED / Complete, its driver having seen head and worker ALIVE
//	v1.6.2/head-deleted           the head Pod deleted with its grace period: it stays Terminating
//	(and v0.3.0/head-deleted)     while Ray stops; the operator's replacement comes up under the
//	                              same FQDN and the workers, restarted as a kubelet restarts them,
//	                              join its table. Never two live heads, never two answering tables,
//	                              no Ray Pod refused (kube-apiserver's counters, the Events)

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"ray-webhook/tests/e2e/framework"
)

const rayJobRealFixture = "testdata/ray-job-v1.yaml"

func testRealV1(t *testing.T) {
	framework.Operator(t, releaseCurrent)
	t.Run("rayjob-real-submitter", testRealRayJob)
	t.Run("head-deleted", func(t *testing.T) { testRealHeadDeleted(t, rayV1Fixture, 2) })
}

// testRealRayJob: the RayJob's submitter is a Pod of the Job controller's,
// whose container RayPods runs, with the command the operator wrote.
func testRealRayJob(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-ray-job")
	rp := framework.RunRayPods(t, ns, framework.Kubelet{})
	const name = "rj-real"
	framework.Create(t, ns, framework.Manifest(t, rayJobRealFixture, map[string]string{"NAME": name}))
	var job *unstructured.Unstructured
	framework.Eventually(t, 5*time.Minute, 2*time.Second, func() (bool, string) {
		if d := rp.Deaths(); len(d) > 0 {
			t.Fatalf("a container of the RayJob's Pods died: %v", d[0])
		}
		var err error
		if job, err = c.Dynamic.Resource(resourcesRayJobs).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{}); err != nil {
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
	// The submitter: the Job controller's Pod, run here, finished by its exit.
	jobs, err := c.Kube.BatchV1().Jobs(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the submitter Job: %v", err)
	}
	pods, err := c.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=" + name})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("the submitter Job's Pods: %v (%d)", err, len(pods.Items))
	}
	sub := pods.Items[0]
	if sub.Status.Phase != corev1.PodSucceeded {
		t.Fatalf("submitter Pod %s: phase %s, want Succeeded", sub.Name, sub.Status.Phase)
	}
	argv := strings.Join(append(append([]string{}, sub.Spec.Containers[0].Command...), sub.Spec.Containers[0].Args...), " ")
	fqdn := fmt.Sprintf(".svc.%s:%d", c.ClusterDomain, dashboardPort)
	if !strings.Contains(argv, "ray job submit --address http://") || !strings.Contains(argv, fqdn) {
		t.Fatalf("submitter Pod %s's command is not the operator's `ray job submit` to the dashboard's FQDN: %s", sub.Name, argv)
	}
	log := rp.Log(sub.Name)
	if !strings.Contains(log, "RAY-JOB-NODES 2") {
		t.Fatalf("submitter Pod %s's output (`ray job logs --follow`) does not show the driver seeing head and worker ALIVE (RAY-JOB-NODES 2):\n%s",
			sub.Name, lastLinesOf(log, 25))
	}
	complete := false
	for _, cond := range jobs.Status.Conditions {
		complete = complete || (cond.Type == "Complete" && cond.Status == corev1.ConditionTrue)
	}
	if !complete || jobs.Status.Succeeded != 1 {
		t.Fatalf("submitter Job %s: succeeded %d, conditions %v; want Complete", jobs.Name, jobs.Status.Succeeded, jobs.Status.Conditions)
	}
	jobID, _, _ := unstructured.NestedString(job.Object, "status", "jobId")
	t.Logf("RayJob %s/%s: jobStatus SUCCEEDED, jobDeploymentStatus Complete (job %s); submitter Pod %s Succeeded, Job %s Complete; its command: %s",
		ns, name, jobID, sub.Name, jobs.Name, argv)
	t.Logf("the driver's line, through `ray job logs --follow`: %s", lineWith(log, "RAY-JOB-NODES 2"))
}

func lineWith(text, s string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, s) {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// headTrace is what headTraceer saw of one cluster's heads.
type headTrace struct {
	polls, maxLive, maxTables int
	terminating               time.Duration // how long a deleted head was seen stored
	sawTerminating            bool
	notes                     []string
}

// traceHeads lists the head Pods of NS/CLUSTER and reads the node table of
// each one stored every 0.5 s, until stop is closed.
func traceHeads(t *testing.T, ns, cluster string, stop <-chan struct{}) <-chan headTrace {
	c := framework.Attach(t)
	out := make(chan headTrace, 1)
	go func() {
		var w headTrace
		var firstTerminating time.Time
		for {
			select {
			case <-stop:
				out <- w
				return
			case <-time.After(500 * time.Millisecond):
			}
			list, err := c.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{
				LabelSelector: "ray.io/cluster=" + cluster + ",ray.io/node-type=head"})
			if err != nil {
				continue
			}
			w.polls++
			liveHeads, tables := 0, 0
			var answering []string
			var mu sync.Mutex
			var wg sync.WaitGroup
			for _, p := range list.Items {
				if live(&p) {
					liveHeads++
				} else if p.DeletionTimestamp != nil {
					w.sawTerminating = true
					if firstTerminating.IsZero() {
						firstTerminating = time.Now()
					}
					w.terminating = time.Since(firstTerminating)
				}
				if p.Status.PodIP == "" {
					continue
				}
				wg.Add(1)
				go func(p corev1.Pod) {
					defer wg.Done()
					if nodes, err := quickTable(p.Status.PodIP); err == nil && len(aliveIPs(nodes)) > 0 {
						mu.Lock()
						tables++
						answering = append(answering, fmt.Sprintf("%s (%s, deleting %v)", p.Name, p.Status.PodIP, p.DeletionTimestamp != nil))
						mu.Unlock()
					}
				}(p)
			}
			wg.Wait()
			w.maxLive = max(w.maxLive, liveHeads)
			if tables > w.maxTables {
				w.maxTables = tables
				w.notes = append(w.notes, fmt.Sprintf("%s: node tables answering at %v", time.Now().UTC().Format("15:04:05.0"), answering))
			}
		}
	}()
	return out
}

// quickTable is nodeTable with a short timeout, for polling.
func quickTable(ip string) ([]rayNode, error) {
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(ip, fmt.Sprint(dashboardPort)), time.Second)
	if err != nil {
		return nil, err
	}
	conn.Close()
	return nodeTable(ip)
}

// testRealHeadDeleted deletes the head of a running cluster (FIXTURE, of
// the running operator's release, with WORKERS workers) whose Pods run Ray,
// and follows the operator, ray-webhook, Ray and the Pod runner through it.
func testRealHeadDeleted(t *testing.T, fixture string, workers int) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-ray-heal")
	rp := framework.RunRayPods(t, ns, framework.Kubelet{})
	const name = "rc-heal"
	createCluster(t, ns, fixture, name, map[string]string{"WORKERS": fmt.Sprint(workers)})
	rc := waitRunning(t, ns, name, workers, rayJoinTimeout)
	waitTable(t, rp, rc, rayJoinTimeout)
	fqdn := fmt.Sprintf("%s.%s.svc.%s", rc.Service.Name, ns, c.ClusterDomain)
	if got := headBehind(t, c, fqdn); got != rc.Head.Status.PodIP {
		t.Fatalf("the dashboard at %s answers as head %q, want %s's IP %s", fqdn, got, rc.Head.Name, rc.Head.Status.PodIP)
	}
	calls0 := apiserverReading(t)

	stop := make(chan struct{})
	watched := traceHeads(t, ns, name, stop)
	deleted := time.Now()
	if err := c.Kube.CoreV1().Pods(ns).Delete(context.Background(), rc.Head.Name, metav1.DeleteOptions{}); err != nil {
		close(stop)
		t.Fatalf("deleting head %s: %v", rc.Head.Name, err)
	}
	var oldGone time.Duration
	framework.Eventually(t, 60*time.Second, 200*time.Millisecond, func() (bool, string) {
		// v1.6.2 names its head <cluster>-head: the replacement has the same name.
		p, err := c.Kube.CoreV1().Pods(ns).Get(context.Background(), rc.Head.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) || (err == nil && p.UID != rc.Head.UID) {
			oldGone = time.Since(deleted)
			return true, ""
		}
		return false, fmt.Sprintf("old head %s (uid %s) still stored (%v)", rc.Head.Name, rc.Head.UID, err)
	})
	// The replacement, and the workers back in its table: each worker's Ray
	// exits once its head is gone and its container is restarted.
	var repl rayCluster
	framework.Eventually(t, 4*time.Minute, 2*time.Second, func() (bool, string) {
		heads := rayPods(t, ns, name, "head")
		if len(heads) != 1 || heads[0].UID == rc.Head.UID || heads[0].Status.PodIP == "" || !podReady(&heads[0]) {
			return false, fmt.Sprintf("%d head Pods, none a ready replacement of %s yet", len(heads), rc.Head.Name)
		}
		repl = rayCluster{NS: ns, Name: name, Head: heads[0], Workers: rayPods(t, ns, name, "worker"), Service: rc.Service}
		nodes, err := nodeTable(repl.Head.Status.PodIP)
		if err != nil {
			return false, fmt.Sprintf("replacement head %s's table: %v", repl.Head.Name, err)
		}
		want := podIPs(append([]corev1.Pod{repl.Head}, repl.Workers...)...)
		got := aliveIPs(nodes)
		return slices.Equal(got, want), fmt.Sprintf("replacement head %s's table: ALIVE %v, want %v", repl.Head.Name, got, want)
	})
	close(stop)
	w := <-watched
	rejoined := time.Since(deleted)

	if got := headBehind(t, c, fqdn); got != repl.Head.Status.PodIP {
		t.Fatalf("after the replacement, the dashboard at %s answers as head %q, want the new head's IP %s", fqdn, got, repl.Head.Status.PodIP)
	}
	// No Ray Pod refused meanwhile: the operator created the replacement once
	// the old head was gone, and its workers' restarts create nothing.
	calls := podCallsSince(t, calls0, apiserverReading(t))
	if calls.Rejected != 0 || calls.FailedOpen != 0 {
		t.Fatalf("while the head was replaced, kube-apiserver counted for %s %v: a Ray Pod refused", podWebhook, calls)
	}
	if failed, _ := failedCreations(t, ns); len(failed) > 0 {
		t.Fatalf("Events of failed creations while the head was replaced: %v", failed)
	}
	if !w.sawTerminating {
		t.Fatalf("in %d polls the deleted head %s was never seen Terminating (stored with a deletionTimestamp)", w.polls, rc.Head.Name)
	}
	if w.maxLive > 1 {
		t.Fatalf("%d live head Pods of %s/%s at once", w.maxLive, ns, name)
	}
	if w.maxTables > 1 {
		t.Fatalf("%d heads' node tables answered at once: %v", w.maxTables, w.notes)
	}
	// KWOK may give the replacement the address the old head had.
	if old := rc.Head.Status.PodIP; old != repl.Head.Status.PodIP {
		if _, err := quickTable(old); err == nil {
			t.Fatalf("the deleted head's address %s still answers a node table", old)
		}
	}
	for _, wk := range repl.Workers {
		restarts := int32(0)
		for _, cs := range wk.Status.ContainerStatuses {
			restarts += cs.RestartCount
		}
		t.Logf("worker %s (%s): restart count %d in its Pod's status", wk.Name, wk.Status.PodIP, restarts)
	}
	for _, d := range rp.Deaths() {
		t.Logf("exited: %s/%s %s at %s", d.Namespace, d.Pod, d.Err, d.At.UTC().Format("15:04:05"))
	}
	t.Logf("head %s (%s) deleted: Terminating while Ray stopped, gone after %v; replacement %s (%s) under %s; every worker ALIVE in its table %v after the delete",
		rc.Head.Name, rc.Head.Status.PodIP, oldGone.Round(100*time.Millisecond), repl.Head.Name, repl.Head.Status.PodIP, fqdn,
		rejoined.Round(time.Second))
	t.Logf("  %d polls every 0.5 s: at most %d live head(s), at most %d answering node table(s); kube-apiserver's calls of %s meanwhile: %v",
		w.polls, w.maxLive, w.maxTables, podWebhook, calls)
	t.Logf("replacement head %s's table (ray list nodes):\n%s", repl.Head.Name, rayList(t, repl.Head.Status.PodIP))
}

// resolveInTestHost is the first address getent gives NAME on the test host,
// resolving with the cluster's DNS alone.
func resolveInTestHost(t *testing.T, c *framework.Cluster, name string) string {
	t.Helper()
	out, err := framework.RunInTestHost(t, onlyNameserver(c.DNSIP), 10*time.Second, "getent", "hosts", name)
	if err != nil {
		t.Fatalf("getent hosts %s: %v\n%s", name, err, out)
	}
	if f := strings.Fields(out); len(f) > 0 {
		return f[0]
	}
	return ""
}

// headBehind is the IP of the ALIVE head in the node table that the
// dashboard at FQDN:8265 answers from the test host (the cluster's DNS
// alone; a ClusterIP Service through kube-proxy, a headless one directly).
func headBehind(t *testing.T, c *framework.Cluster, fqdn string) string {
	t.Helper()
	url := fmt.Sprintf("http://%s:%d/api/v0/nodes?limit=100", fqdn, dashboardPort)
	var head string
	framework.Eventually(t, 30*time.Second, time.Second, func() (bool, string) {
		resp, err := framework.HTTPGetInNetns(t, onlyNameserver(c.DNSIP), url)
		if err != nil {
			return false, fmt.Sprintf("GET %s: %v", url, err)
		}
		nodes, err := decodeNodeTable(url, resp.Status, resp.Body)
		if err != nil {
			return false, err.Error()
		}
		for _, n := range nodes {
			if n.IsHead && n.State == "ALIVE" {
				head = n.NodeIP
			}
		}
		return head != "", fmt.Sprintf("GET %s: no ALIVE head in the table", url)
	})
	return head
}
