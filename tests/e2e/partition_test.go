package e2e

// TestPartition: ray-webhook cut off from kube-apiserver while an operator
// creates Ray clusters, with the shipped configurations (Ray Pods
// failurePolicy Fail, ray.io objects Ignore, timeoutSeconds 5).
//
//	webhook-link-cut  every packet kube-apiserver sends to the shipped replica dropped for 30 s
//	                  (framework.CutLink: a partition, not a refusal), while five v0.3.0
//	                  RayClusters are applied. During the cut: each RayCluster is stored (its
//	                  validation fails open, counted by kube-apiserver), and no Ray Pod is stored
//	                  at all (the Pod webhook's calls fail, counted; none is stored unmutated or
//	                  unchecked). After the link returns, without touching anything else, every
//	                  cluster converges: one head under ray-webhook's name, one worker with
//	                  exactly one FQ_RAY_IP, its head Service's FQDN, both Running; the time to
//	                  converge is logged

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ray-webhook/tests/e2e/framework"
)

const (
	partitionClusters = 5
	partitionCut      = 30 * time.Second
	crWebhook         = "validate.rayclusters.ray-webhook.io"
)

func TestPartition(t *testing.T) {
	framework.Attach(t)
	framework.Operator(t, releaseLegacy)
	t.Run("webhook-link-cut", testLinkCut)
}

func testLinkCut(t *testing.T) {
	c := framework.Attach(t)
	ctx := context.Background()
	ns := framework.NewNamespace(t, "e2e-partition")
	before := apiserverReading(t)
	restore := framework.CutLink(t, c.WebhookIP, c.WebhookPort)
	cutAt := time.Now()

	// The RayClusters, applied at once (each create waits out its webhook's
	// timeout before failing open).
	var wg sync.WaitGroup
	names := make([]string, partitionClusters)
	errs := make([]error, partitionClusters)
	for i := range names {
		names[i] = fmt.Sprintf("rc-cut-%d", i)
		obj := framework.Manifest(t, "testdata/raycluster-v1alpha1.yaml", map[string]string{"NAME": names[i]})
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = c.Dynamic.Resource(legacyRayClusters).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{})
		}(i)
	}
	// No Ray Pod stored while the link is cut, polled every 0.5 s.
	polls := 0
	for time.Since(cutAt) < partitionCut {
		pods, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "ray.io/node-type"})
		if err != nil {
			t.Fatalf("listing Ray Pods: %v", err)
		}
		polls++
		if len(pods.Items) > 0 {
			restore()
			p := pods.Items[0]
			t.Fatalf("%.1f s into the cut, Ray Pod %s/%s was stored (env %v): admitted without ray-webhook",
				time.Since(cutAt).Seconds(), ns, p.Name, p.Spec.Containers[0].Env)
		}
		time.Sleep(500 * time.Millisecond)
	}
	wg.Wait()
	during := apiserverReading(t)
	restore()
	restoredAt := time.Now()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("applying RayCluster %s during the cut: %v (its validation is failurePolicy Ignore)", names[i], err)
		}
	}

	pod, err := framework.WebhookCallsSince(before, during, podWebhook)
	if err != nil {
		t.Fatal(err)
	}
	cr, err := framework.WebhookCallsSince(before, during, crWebhook)
	if err != nil {
		t.Fatal(err)
	}
	if pod.Rejected == 0 || pod.FailedOpen != 0 {
		t.Errorf("during the cut kube-apiserver counted for %s %v; want its calls failed and rejected (failurePolicy Fail), none failed open", podWebhook, pod)
	}
	if cr.FailedOpen < partitionClusters {
		t.Errorf("during the cut kube-apiserver counted for %s %v; want at least %d calls failed open (failurePolicy Ignore), one per RayCluster", crWebhook, cr, partitionClusters)
	}

	// Convergence once the link is back, with nothing else done.
	var converged time.Duration
	framework.Eventually(t, 3*time.Minute, time.Second, func() (bool, string) {
		for _, name := range names {
			heads, workers := rayPods(t, ns, name, "head"), rayPods(t, ns, name, "worker")
			if len(heads) != 1 || len(workers) != 1 {
				return false, fmt.Sprintf("%s: %d heads, %d workers stored", name, len(heads), len(workers))
			}
			for _, p := range append(heads, workers...) {
				if p.Status.Phase != corev1.PodRunning {
					return false, fmt.Sprintf("%s: Pod %s %s", name, p.Name, p.Status.Phase)
				}
			}
		}
		converged = time.Since(restoredAt)
		return true, ""
	})
	for _, name := range names {
		head, worker := rayPods(t, ns, name, "head")[0], rayPods(t, ns, name, "worker")[0]
		if head.Name != upgradeHeadName(name) {
			t.Errorf("%s's head is %s, want ray-webhook's name %s", name, head.Name, upgradeHeadName(name))
		}
		fqdn := fmt.Sprintf("%s.%s.svc.%s", headService(name), ns, c.ClusterDomain)
		if v := envValues(worker.Spec.Containers[0], "FQ_RAY_IP"); len(v) != 1 || v[0] != fqdn {
			t.Errorf("%s's worker %s: FQ_RAY_IP %q, want exactly [%s]", name, worker.Name, v, fqdn)
		}
	}
	after := apiserverReading(t)
	podAfter, err := framework.WebhookCallsSince(during, after, podWebhook)
	if err != nil {
		t.Fatal(err)
	}
	if podAfter.Rejected != 0 || podAfter.FailedOpen != 0 || podAfter.Calls < 2*partitionClusters {
		t.Errorf("after the cut kube-apiserver counted for %s %v; want at least %d calls, none rejected or failed open",
			podWebhook, podAfter, 2*partitionClusters)
	}
	t.Logf("link to %s:%d cut for %v: %d RayClusters stored (%s: %v); %d polls, no Ray Pod stored; %s: %v",
		c.WebhookIP, c.WebhookPort, partitionCut, partitionClusters, crWebhook, cr, polls, podWebhook, pod)
	t.Logf("  link back: every cluster's head and worker stored and Running %v later, heads named by ray-webhook, each worker with one FQ_RAY_IP; %s meanwhile: %v",
		converged.Round(100*time.Millisecond), podWebhook, podAfter)
}
