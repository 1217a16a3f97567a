package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

const (
	webhookNamespace = "ray-webhook-system"
	// WebhookSlice is the EndpointSlice of Service ray-webhook that
	// scripts/e2e.sh writes (no Pod backs the Service, so no controller does).
	WebhookSlice = "ray-webhook-e2e"
	// routeCheckNamespace holds the dry-run Pods that show where the webhook
	// calls go (the webhooks select every namespace but kube-system and
	// ray-webhook-system; default exists in every cluster).
	routeCheckNamespace = "default"
)

// Replica is a ray-webhook server this framework started.
type Replica struct {
	IP        string
	Port      int
	ProbePort int
	Args      []string // after "serve"
	Process   *Process
}

var replicaMu sync.Mutex

// WebhookReplica starts RAY_WEBHOOK serve on WEBHOOK_IP2 (a free port,
// --cert-dir WEBHOOK_CERT_DIR, WEBHOOK_ARGS, then extraArgs, the second-head
// lookup given --kube-api-server APISERVER --kube-ca-file SA_DIR/ca.crt
// --kube-token-file SA_DIR/token, --probe-port free) with the environment
// plus CLUSTER_DOMAIN=CLUSTER_DOMAIN (as the Deployment sets it) plus env
// (KEY=VALUE, later wins). It waits for /readyz on the probe port, points the
// EndpointSlice ray-webhook-e2e at WEBHOOK_IP2:PORT alone, and returns once
// kube-apiserver's webhook calls reach the replica (a dry-run Ray worker Pod
// shows up in its log). When t ends the slice is pointed back at
// WEBHOOK_IP:WEBHOOK_PORT, the calls are seen to reach WEBHOOK_LOG again, and
// the replica is stopped. One replica at a time.
func WebhookReplica(t testing.TB, extraArgs []string, env []string) *Replica {
	t.Helper()
	c := Attach(t)
	if !replicaMu.TryLock() {
		t.Fatalf("WebhookReplica: another replica started by this suite is still running")
	}
	t.Cleanup(replicaMu.Unlock)
	r := &Replica{IP: c.WebhookIP2, Port: freePort(t, c.WebhookIP2)}
	r.ProbePort = freePort(t, c.WebhookIP2)
	for r.ProbePort == r.Port {
		r.ProbePort = freePort(t, c.WebhookIP2)
	}
	r.Args = append([]string{"serve", "--cert-dir", c.WebhookCertDir, "--bind", r.IP, "--port", itoa(r.Port)}, c.WebhookArgs...)
	r.Args = append(r.Args, extraArgs...)
	r.Args = append(r.Args, "--probe-port="+itoa(r.ProbePort),
		"--kube-api-server", c.APIServer, "--kube-ca-file", filepath.Join(c.SADir, "ca.crt"),
		"--kube-token-file", filepath.Join(c.SADir, "token"))
	cmd := exec.Command(c.RayWebhook, r.Args...)
	cmd.Env = append(append(os.Environ(), "CLUSTER_DOMAIN="+c.ClusterDomain), env...)
	r.Process = start(t, c, "ray-webhook-replica", cmd)
	waitHTTP(t, r.Process, fmt.Sprintf("http://%s:%d/readyz", r.IP, r.ProbePort), 30*time.Second)

	// Registered after the process's Stop, so it runs before it.
	t.Cleanup(func() {
		if err := pointSlice(c, c.WebhookIP, c.WebhookPort); err != nil {
			t.Errorf("pointing EndpointSlice %s back at %s:%d: %v", WebhookSlice, c.WebhookIP, c.WebhookPort, err)
			return
		}
		if why, ok := routedTo(c, c.WebhookLog); !ok {
			t.Errorf("after pointing EndpointSlice %s back at %s:%d the webhook calls do not reach it: %s",
				WebhookSlice, c.WebhookIP, c.WebhookPort, why)
		}
	})
	if err := pointSlice(c, r.IP, r.Port); err != nil {
		t.Fatalf("pointing EndpointSlice %s at %s:%d: %v", WebhookSlice, r.IP, r.Port, err)
	}
	if why, ok := routedTo(c, r.Process.Log); !ok {
		t.Fatalf("EndpointSlice %s names %s:%d but the webhook calls do not reach the replica: %s; the end of %s:\n%s",
			WebhookSlice, r.IP, r.Port, why, r.Process.Log, r.Process.Tail(15))
	}
	t.Logf("ray-webhook replica on %s:%d receives the webhook calls (args %s; log %s)",
		r.IP, r.Port, strings.Join(append(c.WebhookArgs, extraArgs...), " "), r.Process.Log)
	return r
}

// pointSlice makes EndpointSlice ray-webhook-e2e name IP:PORT (port "https") alone, ready.
func pointSlice(c *Cluster, ip string, port int) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	slices := c.Kube.DiscoveryV1().EndpointSlices(webhookNamespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := slices.Get(ctx, WebhookSlice, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Endpoints = []discoveryv1.Endpoint{{
			Addresses:  []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		}}
		s.Ports = []discoveryv1.EndpointPort{{
			Name: ptr.To("https"), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP),
		}}
		_, err = slices.Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
}

// routedTo sends dry-run Ray worker Pods (each a new name) until one appears
// in the log file of the replica that should get them (at most 30 s).
// kube-apiserver's endpoint resolver follows the EndpointSlice through an
// informer, so the switch takes a moment.
func routedTo(c *Cluster, log string) (string, bool) {
	return poll1(30*time.Second, 0, func() (bool, string) {
		name := "route-check-" + randomSuffix()
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
				"ray.io/cluster": "route-check", "ray.io/node-type": "worker", "ray.io/group": "workers"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.52.0"}}},
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := c.Kube.CoreV1().Pods(routeCheckNamespace).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		cancel()
		// The server writes its review lines from a thread of its own, at
		// least twice a second.
		for i := 0; i < 10; i++ {
			b, _ := os.ReadFile(log)
			if strings.Contains(string(b), "pod="+name+" ") {
				return true, ""
			}
			time.Sleep(100 * time.Millisecond)
		}
		return false, fmt.Sprintf("dry-run Pod %s/%s (create: %v) not in %s", routeCheckNamespace, name, err, log)
	})
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
