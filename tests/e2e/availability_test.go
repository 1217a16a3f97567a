package e2e

// TestAvailability: what happens to Pod creations while ray-webhook's
// replicas restart and rotate their certificate, and the lookup in a crowded
// namespace (old checks 9, 10 and 11n). Two replicas serve behind the
// Service: the shipped one (WEBHOOK_IP) and one started here on WEBHOOK_IP2,
// on the same port (an EndpointSlice has one port list).
//
//	restart-under-load        tests/e2e/cmd/podload creates Ray worker Pods for 20 s; replica B
//	                          gets SIGTERM, is marked not ready in the EndpointSlice a second later
//	                          (on a node the kubelet's SIGTERM and the endpoint controller's update
//	                          race), drains, exits, is started again and marked ready by its
//	                          readinessProbe (framework/prober.go): no creation fails, both
//	                          replicas served reviews, the load outlasted the restart
//	rotation-under-load       a new CA and pair from certs/generate.sh, both configurations' caBundle
//	                          holding old and new CA, podload for 16 s, the serving Secret's ..data
//	                          swapped to the new pair as the kubelet does: no creation fails, both
//	                          replicas present the new certificate while the load still runs
//	lookup-among-thousands    a namespace holding thousands of worker Pods of rc-load: its first head
//	                          is created with no warning, a second head refused (409) naming it

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ray-webhook/tests/e2e/framework"
)

const availabilityCluster = "rc-load"

func TestAvailability(t *testing.T) {
	framework.Attach(t)
	t.Run("restart-under-load", testAvailabilityRestart)
	t.Run("rotation-under-load", testAvailabilityRotation)
	t.Run("lookup-among-thousands", testAvailabilityCrowdedLookup)
}

// availabilityLoad is a running tests/e2e/cmd/podload.
type availabilityLoad struct {
	cmd  *exec.Cmd
	out  string
	done chan struct{}
}

// availabilityResult is what podload writes when it ends.
type availabilityResult struct {
	Created  int             `json:"created"`
	Failed   int             `json:"failed"`
	Seconds  float64         `json:"seconds"`
	Failures json.RawMessage `json:"failures"`
}

// availabilityStartLoad creates Ray worker Pods of rc-load in NS for SECONDS
// as fast as 4 clients can (at most MAX), never scheduled: what is measured
// is admission.
func availabilityStartLoad(t *testing.T, ns string, seconds, max int) *availabilityLoad {
	t.Helper()
	return startPodload(t, ns, seconds, 4, 0, max)
}

// startPodload runs tests/e2e/cmd/podload in NS for SECONDS with CLIENTS
// clients, at RATE creations a second (0: as fast as they can), at most MAX
// Ray worker Pods of rc-load, never scheduled; it is killed when t ends.
func startPodload(t *testing.T, ns string, seconds, clients, rate, max int) *availabilityLoad {
	t.Helper()
	c := framework.Attach(t)
	out := filepath.Join(c.Work, "go-load-"+ns+".json")
	args := []string{"-server", c.APIServer,
		"-ca", filepath.Join(c.PKI, "ca.crt"), "-cert", filepath.Join(c.PKI, "admin.crt"), "-key", filepath.Join(c.PKI, "admin.key"),
		"-namespace", ns, "-cluster", availabilityCluster, "-duration", strconv.Itoa(seconds) + "s", "-c", strconv.Itoa(clients),
		"-max", strconv.Itoa(max), "-scheduler-name", "e2e-unscheduled"}
	if rate > 0 {
		args = append(args, "-rate", strconv.Itoa(rate))
	}
	cmd := exec.Command(filepath.Join(c.Bin, "podload"), args...)
	f, err := os.Create(out)
	if err != nil {
		t.Fatalf("podload output: %v", err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("starting podload: %v", err)
	}
	l := &availabilityLoad{cmd: cmd, out: out, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); f.Close(); close(l.done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-l.done
	})
	return l
}

func (l *availabilityLoad) running() bool {
	select {
	case <-l.done:
		return false
	default:
		return true
	}
}

func (l *availabilityLoad) wait(t *testing.T) availabilityResult {
	t.Helper()
	select {
	case <-l.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("podload did not end within 2 minutes")
	}
	b, _ := os.ReadFile(l.out)
	var r availabilityResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("podload's result does not parse (%v): %s", err, truncate(string(b), 300))
	}
	return r
}

// availabilityTwoReplicas starts replica B on WEBHOOK_IP2:WEBHOOK_PORT and
// puts both replicas in the EndpointSlice.
func availabilityTwoReplicas(t *testing.T) *framework.Replica {
	t.Helper()
	c := framework.Attach(t)
	b := framework.StartReplica(t, framework.ReplicaOptions{Name: "ray-webhook-b", Port: c.WebhookPort, Route: framework.RouteNone})
	framework.PointSlice(t, c.WebhookPort,
		framework.Endpoint{IP: c.WebhookIP, Ready: true}, framework.Endpoint{IP: b.IP, Ready: true})
	// The API server's endpoint resolver follows the slice through an informer.
	time.Sleep(time.Second)
	return b
}

func testAvailabilityRestart(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-load-restart")
	b := availabilityTwoReplicas(t)
	load := availabilityStartLoad(t, ns, 20, 10000)
	time.Sleep(4 * time.Second)

	// SIGTERM; it keeps serving through --drain-delay while the slice changes.
	stopped := make(chan struct{})
	go func() { b.Stop(); close(stopped) }()
	time.Sleep(time.Second)
	framework.PointSlice(t, c.WebhookPort,
		framework.Endpoint{IP: c.WebhookIP, Ready: true}, framework.Endpoint{IP: b.IP, Ready: false})
	<-stopped
	firstLog := b.Process.Log
	b.Start(t)
	// Its readinessProbe, not the test, marks it ready again.
	framework.WaitEndpointReady(t, framework.ServiceSlice, b.IP, true, 10*time.Second)
	covered := load.running()
	r := load.wait(t)

	onA := framework.CountLines(c.WebhookLog, "namespace="+ns+" ")
	onB := framework.CountLines(firstLog, "namespace="+ns+" ") + framework.CountLines(b.Process.Log, "namespace="+ns+" ")
	t.Logf("created %d, failed %d in %.1f s; the load outlasted the restart: %v; reviews: replica A %d, replica B %d",
		r.Created, r.Failed, r.Seconds, covered, onA, onB)
	if r.Created == 0 || r.Failed != 0 {
		t.Errorf("created %d, failed %d: %s", r.Created, r.Failed, truncate(string(r.Failures), 400))
	}
	if onA == 0 || onB == 0 {
		t.Errorf("both replicas should have served reviews: A %d, B %d", onA, onB)
	}
	if !covered {
		t.Errorf("the load ended before the restart did: nothing was proven under load")
	}
}

func testAvailabilityRotation(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-load-rotate")
	b := availabilityTwoReplicas(t)

	rotated := filepath.Join(c.Work, "go-rotated-"+ns)
	gen := exec.Command("bash", filepath.Join(c.DeploySrc, "certs", "generate.sh"), "--out", rotated)
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("certs/generate.sh --out: %v\n%s", err, out)
	}
	read := func(dir, name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%v", err)
		}
		return b
	}
	oldPair := framework.ReadVolume(t, c.WebhookCertDir)
	oldCA, newCA := read(c.WebhookCerts, "ca.crt"), read(rotated, "ca.crt")
	both := append(append([]byte{}, oldCA...), newCA...)

	// Cleanups run last-registered first: the pair swapped back, then both
	// replicas seen serving it, then the caBundle back to the old CA alone,
	// so no call meets a certificate its caBundle does not trust.
	availabilitySetCABundle(t, oldCA, both)
	t.Cleanup(func() {
		want := availabilityFingerprintPEM(t, oldPair["tls.crt"])
		availabilityWaitServed(t, []string{c.WebhookIP, b.IP}, c.WebhookPort, want, 30*time.Second)
	})
	time.Sleep(2 * time.Second)

	load := availabilityStartLoad(t, ns, 16, 10000)
	time.Sleep(4 * time.Second)
	framework.SwapVolume(t, c.WebhookCertDir, map[string][]byte{
		"tls.crt": read(rotated, "tls.crt"), "tls.key": read(rotated, "tls.key"), "ca.crt": newCA,
	})
	want := availabilityFingerprintPEM(t, read(rotated, "tls.crt"))
	availabilityWaitServed(t, []string{c.WebhookIP, b.IP}, c.WebhookPort, want, 15*time.Second)
	covered := load.running()
	r := load.wait(t)
	t.Logf("created %d, failed %d in %.1f s; both replicas present the new certificate; the load outlasted the swap: %v",
		r.Created, r.Failed, r.Seconds, covered)
	if r.Created == 0 || r.Failed != 0 {
		t.Errorf("created %d, failed %d: %s", r.Created, r.Failed, truncate(string(r.Failures), 400))
	}
	if !covered {
		t.Errorf("the load ended before both replicas served the new certificate: nothing was proven under load")
	}
}

// availabilitySetCABundle sets every webhook's caBundle of both
// configurations to BUNDLE, and back to OLD when t ends.
func availabilitySetCABundle(t *testing.T, old, bundle []byte) {
	t.Helper()
	c := framework.Attach(t)
	set := func(ca []byte) error {
		ctx := context.Background()
		m, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "ray-webhook", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range m.Webhooks {
			m.Webhooks[i].ClientConfig.CABundle = ca
		}
		if _, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{}); err != nil {
			return err
		}
		v, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "ray-webhook", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range v.Webhooks {
			v.Webhooks[i].ClientConfig.CABundle = ca
		}
		_, err = c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Update(ctx, v, metav1.UpdateOptions{})
		return err
	}
	t.Cleanup(func() {
		if err := set(old); err != nil {
			t.Errorf("restoring the caBundle: %v", err)
		}
	})
	if err := set(bundle); err != nil {
		t.Fatalf("setting the caBundle: %v", err)
	}
}

// availabilityFingerprintPEM is the SHA-256 of the first certificate of PEM.
func availabilityFingerprintPEM(t *testing.T, pemBytes []byte) [32]byte {
	t.Helper()
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		t.Fatalf("no PEM certificate")
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		t.Fatalf("certificate: %v", err)
	}
	return sha256.Sum256(block.Bytes)
}

// availabilityServed is the SHA-256 of the certificate IP:PORT presents for
// the Service's name (the name kube-apiserver sends as SNI).
func availabilityServed(ip string, port int) ([32]byte, error) {
	d := &net.Dialer{Timeout: 3 * time.Second}
	conn, err := tls.DialWithDialer(d, "tcp", net.JoinHostPort(ip, strconv.Itoa(port)), &tls.Config{
		ServerName:         "ray-webhook.ray-webhook-system.svc",
		InsecureSkipVerify: true, // only the presented certificate is compared
	})
	if err != nil {
		return [32]byte{}, err
	}
	defer conn.Close()
	certs := conn.ConnectionState().PeerCertificates
	if len(certs) == 0 {
		return [32]byte{}, fmt.Errorf("no certificate")
	}
	return sha256.Sum256(certs[0].Raw), nil
}

func availabilityWaitServed(t *testing.T, ips []string, port int, want [32]byte, timeout time.Duration) {
	t.Helper()
	framework.Eventually(t, timeout, 250*time.Millisecond, func() (bool, string) {
		for _, ip := range ips {
			got, err := availabilityServed(ip, port)
			if err != nil {
				return false, fmt.Sprintf("%s:%d: %v", ip, port, err)
			}
			if !bytes.Equal(got[:], want[:]) {
				return false, fmt.Sprintf("%s:%d presents %x, want %x", ip, port, got[:8], want[:8])
			}
		}
		return true, ""
	})
}

func testAvailabilityCrowdedLookup(t *testing.T) {
	c := framework.Attach(t)
	ctx := context.Background()
	ns := framework.NewNamespace(t, "e2e-load-lookup")
	r := availabilityStartLoad(t, ns, 60, 3000).wait(t)
	if r.Failed != 0 {
		t.Fatalf("filling the namespace: created %d, failed %d: %s", r.Created, r.Failed, truncate(string(r.Failures), 300))
	}
	list, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		t.Fatalf("listing Pods of %s: %v", ns, err)
	}
	stored := len(list.Items)
	if list.RemainingItemCount != nil {
		stored += int(*list.RemainingItemCount)
	}
	if stored < 1000 {
		t.Fatalf("namespace %s holds %d Pods, want thousands", ns, stored)
	}

	kube, warnings := framework.KubeWithWarnings(t)
	head := availabilityRayPod(availabilityCluster+"-head", "head", "2.52.0", nil)
	if _, err := kube.CoreV1().Pods(ns).Create(ctx, head, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the first head of %s among %d Pods: %v", availabilityCluster, stored, err)
	}
	if w := warnings.Take(); len(w) != 0 {
		t.Errorf("the first head drew warnings: %q", w)
	}
	// Exempt from the head-name rule (Autoscaler v2 on Ray 2.46), so the lookup alone decides.
	second := availabilityRayPod(availabilityCluster+"-head-v2", "head", "2.46.0",
		[]corev1.EnvVar{{Name: "RAY_enable_autoscaler_v2", Value: "1"}})
	_, err = kube.CoreV1().Pods(ns).Create(ctx, second, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	want := fmt.Sprintf("already has a live head Pod %q", availabilityCluster+"-head")
	if !apierrors.IsConflict(err) || !strings.Contains(err.Error(), `admission webhook "mutate.pods.ray-webhook.io" denied the request`) ||
		!strings.Contains(err.Error(), want) {
		t.Fatalf("a second head among %d Pods: want 409 from mutate.pods.ray-webhook.io with %s, got %v", stored, want, err)
	}
	framework.WaitLines(t, c.WebhookLog, 1, "path=/admit ", "namespace="+ns+" ", "pod="+availabilityCluster+"-head ")
	line := firstLine(framework.Lines(c.WebhookLog, "path=/admit ", "namespace="+ns+" ", "pod="+availabilityCluster+"-head "))
	us := ""
	if i := strings.Index(line, " us="); i >= 0 {
		us = strings.Fields(line[i+1:])[0]
	}
	t.Logf("among %d Pods: the first head admitted with no warning (review %s), a second refused: %s", stored, us, truncate(err.Error(), 200))
}

// availabilityRayPod is a Ray Pod of rc-load as KubeRay labels it, on Ray
// VERSION, never scheduled.
func availabilityRayPod(name, nodeType, version string, env []corev1.EnvVar) *corev1.Pod {
	group := "workers"
	if nodeType == "head" {
		group = "headgroup"
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"ray.io/cluster": availabilityCluster, "ray.io/node-type": nodeType, "ray.io/group": group}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "ray-" + nodeType, Image: "rayproject/ray:" + version, Env: env,
		}}},
	}
}
