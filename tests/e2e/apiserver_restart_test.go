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
//	                      the first correct refusal, are logged

import (
	"context"
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
	away, ended := framework.RestartAPIServer(t)
	readyAt := time.Now()

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

	var before, during, after, failedAfter, unmutated int
	var firstErr string
	for _, r := range load.results {
		switch {
		case r.at.Before(restartAt):
			before++
		case r.at.Before(readyAt.Add(refusedAfter)):
			during++
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
		before, during, failedDuring, firstErr, after, served)
}
