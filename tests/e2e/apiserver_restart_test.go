package e2e

// TestAPIServerRestart: kube-apiserver restarted (SIGTERM, started again)
// while Ray worker Pods are being created, ray-webhook left running.
//
//	head-lookup-recovers  head A stored; a second head of its cluster refused (409, naming A)
//	                      before. A loop creates a worker Pod every 50 ms throughout. After the
//	                      restart, the second head is refused again naming A (ray-webhook's
//	                      lookup reaches the new API server by itself), the workers created
//	                      since are all admitted and mutated, and the shipped replica's request
//	                      counter never went down (the same process served throughout). The
//	                      creations that failed while the API server was away, and the time to
//	                      the first correct refusal, are logged. While it is away, the second
//	                      head's review is sent straight to the replica (as another API server
//	                      of the cluster would): it is answered at once, allowed with the lookup's
//	                      "could not check" warning, and that failure does not stick

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ray-webhook/tests/e2e/framework"
)

func TestAPIServerRestart(t *testing.T) {
	framework.Attach(t)
	t.Run("head-lookup-recovers", testHeadLookupRecovers)
}

// workerLoad creates a worker Pod of CLUSTER in NS every 50 ms until stop,
// recording when each create ended and how.
type workerLoad struct {
	mu      sync.Mutex
	results []loadResult
	done    chan struct{}
}

type loadResult struct {
	at       time.Time
	err      error
	name     string
	mutation bool // the stored worker has FQ_RAY_IP
}

func startWorkerLoad(t *testing.T, ns, cluster string, stop <-chan struct{}) *workerLoad {
	c := framework.Attach(t)
	l := &workerLoad{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			p, err := c.Kube.CoreV1().Pods(ns).Create(ctx, bareWorker(cluster), metav1.CreateOptions{})
			cancel()
			r := loadResult{at: time.Now(), err: err}
			if err == nil {
				r.name = p.Name
				r.mutation = len(envValues(p.Spec.Containers[0], "FQ_RAY_IP")) == 1
			}
			l.mu.Lock()
			l.results = append(l.results, r)
			l.mu.Unlock()
		}
	}()
	return l
}

// bareWorker is a worker as KubeRay v0.3.0 builds it, naming its head by
// the bare Service name: ray-webhook adds FQ_RAY_IP.
func bareWorker(cluster string) *corev1.Pod {
	p := lookupPod("w-", cluster, "worker")
	svc := headService(cluster)
	p.Spec.Containers[0].Command = []string{"/bin/bash", "-lc", "--"}
	p.Spec.Containers[0].Args = []string{"ray start --address=" + svc + ":6379 --block"}
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "RAY_IP", Value: svc}}
	return p
}

func testHeadLookupRecovers(t *testing.T) {
	c := framework.Attach(t)
	ctx := context.Background()
	ns := framework.NewNamespace(t, "e2e-apiserver-restart")
	const cluster = "rc-restart"
	create := func(p *corev1.Pod, dryRun bool) error {
		opts := metav1.CreateOptions{}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		_, err := c.Kube.CoreV1().Pods(ns).Create(ctx, p, opts)
		return err
	}
	if err := create(lookupExempt("rc-restart-a", cluster), false); err != nil {
		t.Fatalf("head A: %v", err)
	}
	second := lookupExempt("rc-restart-b", cluster)
	if why := lookupRefusal(create(second, true), "rc-restart-a"); why != "" {
		t.Fatalf("before the restart, a second head: want the lookup's 409 naming rc-restart-a, got %s", why)
	}
	replica0, err := framework.ReplicaMetrics(ctx, c, c.WebhookIP, c.WebhookPort)
	if err != nil {
		t.Fatalf("the shipped replica's metrics: %v", err)
	}

	stop := make(chan struct{})
	load := startWorkerLoad(t, ns, cluster, stop)
	time.Sleep(3 * time.Second)
	restartAt := time.Now()
	// While kube-apiserver is away, the second head's review straight to the
	// shipped replica (as another API server of the cluster would send it):
	// its lookup fails, and the failure must not stick.
	whileAway := make(chan awayReview, 1)
	go func() { whileAway <- reviewWhileAway(c, ns, second) }()
	away, ended := framework.RestartAPIServer(t)
	readyAt := time.Now()
	during := <-whileAway
	if during.err != "" {
		t.Fatalf("the review while kube-apiserver was away: %s", during.err)
	}

	// The lookup, through ray-webhook's own client, once the API server is back.
	var refusedAfter time.Duration
	framework.Eventually(t, 60*time.Second, 200*time.Millisecond, func() (bool, string) {
		why := lookupRefusal(create(second, true), "rc-restart-a")
		refusedAfter = time.Since(readyAt)
		return why == "", "a second head after the restart: " + why
	})
	time.Sleep(5 * time.Second)
	close(stop)
	<-load.done

	replica1, err := framework.ReplicaMetrics(ctx, c, c.WebhookIP, c.WebhookPort)
	if err != nil {
		t.Fatalf("the shipped replica's metrics: %v", err)
	}
	served, err := replica1.Delta(replica0, "controller_runtime_webhook_requests_total", map[string]string{"webhook": "/admit"})
	if err != nil {
		t.Fatalf("the shipped replica's request counter: %v (a restarted process starts it again from 0)", err)
	}

	var before, creations, after, failedAfter, unmutated int
	var firstErr string
	for _, r := range load.results {
		switch {
		case r.at.Before(restartAt):
			before++
		case r.at.Before(readyAt.Add(refusedAfter)):
			creations++
			if r.err != nil && firstErr == "" {
				firstErr = r.err.Error()
			}
		default:
			after++
			if r.err != nil {
				failedAfter++
				if firstErr == "" || !strings.Contains(firstErr, "after:") {
					firstErr = "after: " + r.err.Error()
				}
			} else if !r.mutation {
				unmutated++
			}
		}
	}
	if after == 0 || failedAfter != 0 || unmutated != 0 {
		t.Fatalf("after the lookup recovered: %d worker creations, %d failed, %d stored without one FQ_RAY_IP (%s)",
			after, failedAfter, unmutated, firstErr)
	}
	failedDuring := 0
	for _, r := range load.results {
		if !r.at.Before(restartAt) && r.at.Before(readyAt.Add(refusedAfter)) && r.err != nil {
			failedDuring++
		}
	}
	t.Logf("kube-apiserver away %v (SIGTERM to /readyz; it %s); the lookup refused the second head again %v after /readyz, naming rc-restart-a",
		away.Round(100*time.Millisecond), ended, refusedAfter.Round(100*time.Millisecond))
	t.Logf("  worker creations every 50 ms: %d before, %d while away or recovering (%d failed, first: %.200s), %d after, all admitted with FQ_RAY_IP; the shipped replica answered %g /admit calls without restarting",
		before, creations, failedDuring, firstErr, after, served)
	t.Logf("  while it was away, the replica answered the second head's review in %v: %s",
		during.took.Round(time.Millisecond), during.answer)
}

// awayReview is the shipped replica's answer to a review sent while
// kube-apiserver was away: its allowed and warnings (or its denial), how long
// it took, or why the check could not be made.
type awayReview struct {
	answer string
	took   time.Duration
	err    string
}

// reviewWhileAway waits until kube-apiserver refuses connections, then sends
// the shipped replica an AdmissionReview of POD's creation in NS (a dry run)
// with the suite's CA. The answer must come within the lookup's deadline and
// say that the lookup could not reach the API (a warning with the shipped
// --head-lookup-failure=allow).
func reviewWhileAway(c *framework.Cluster, ns string, pod *corev1.Pod) awayReview {
	u, err := url.Parse(c.APIServer)
	if err != nil {
		return awayReview{err: err.Error()}
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			break
		}
		conn.Close()
		if time.Now().After(deadline) {
			return awayReview{err: "kube-apiserver never refused a connection within 60 s of its SIGTERM"}
		}
		time.Sleep(100 * time.Millisecond)
	}
	object := pod.DeepCopy()
	object.APIVersion, object.Kind, object.Namespace = "v1", "Pod", ns
	body, _ := json.Marshal(map[string]any{
		"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
		"request": map[string]any{
			"uid": "e2e-away-" + randomName(), "operation": "CREATE", "namespace": ns, "name": object.Name,
			"kind": map[string]string{"group": "", "version": "v1", "kind": "Pod"}, "dryRun": true,
			"resource": map[string]string{"group": "", "version": "v1", "resource": "pods"},
			"userInfo": map[string]any{"username": "e2e"}, "object": object,
		},
	})
	ca, err := os.ReadFile(filepath.Join(c.WebhookCerts, "ca.crt"))
	if err != nil {
		return awayReview{err: err.Error()}
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "ray-webhook.ray-webhook-system.svc"}}}
	start := time.Now()
	resp, err := client.Post(fmt.Sprintf("https://%s/admit?timeout=5s", net.JoinHostPort(c.WebhookIP, strconv.Itoa(c.WebhookPort))),
		"application/json", bytes.NewReader(body))
	took := time.Since(start)
	if err != nil {
		return awayReview{err: fmt.Sprintf("no answer from the replica: %v", err)}
	}
	defer resp.Body.Close()
	var answer struct {
		Response struct {
			Allowed  bool     `json:"allowed"`
			Warnings []string `json:"warnings"`
			Status   struct {
				Message string `json:"message"`
			} `json:"status"`
		} `json:"response"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &answer) != nil {
		return awayReview{err: fmt.Sprintf("the replica answered %d: %.300s", resp.StatusCode, raw)}
	}
	text := fmt.Sprintf("allowed=%v warnings=%q %s", answer.Response.Allowed, answer.Response.Warnings, answer.Response.Status.Message)
	if !answer.Response.Allowed || !strings.Contains(strings.Join(answer.Response.Warnings, " "), "could not check") {
		return awayReview{err: "want the shipped allow with a warning that the lookup could not check, got " + text}
	}
	if took > 6*time.Second {
		return awayReview{err: fmt.Sprintf("the answer took %v, past the webhook's 5 s timeout", took)}
	}
	return awayReview{answer: text, took: took}
}
