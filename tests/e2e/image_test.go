package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"ray-webhook/tests/e2e/framework"
)

// TestImage: the replicas run from the image users install (scripts/image.sh),
// as the Deployment asks a container runtime to run it: the image's
// entrypoint and user, a read-only root filesystem, the serving Secret at the
// entrypoint's --cert-dir, the ServiceAccount volume at the kubelet's path.
// A replica that came up at all has also shown that the image's libraries
// load and its entrypoint serves (its readinessProbe succeeded).
//
//	kubelet-probes   the replica's readiness, published in an EndpointSlice, follows the
//	                 Deployment's readinessProbe; hung (SIGSTOP) it is marked not ready, then
//	                 killed by its livenessProbe and started again, and ready again
func TestImage(t *testing.T) {
	// In parallel (docs/end-to-end.md, "Tests in parallel"): its replica is
	// routed to by nothing, publishes its readiness in its own namespace's
	// slice, and it creates no Ray Pod and no custom resource.
	t.Parallel()
	c := framework.Attach(t)
	if c.Image == nil {
		t.Fatalf("the cluster runs ray-webhook from %s, not from its image (E2E_IMAGE unset; scripts/e2e.sh builds it)", c.RayWebhook)
	}
	// Its readiness is published in a Service of its own, which nothing calls:
	// the liveness check below hangs it.
	ns := framework.NewNamespace(t, "e2e-image")
	slice := framework.SliceRef{Namespace: ns, Name: "probe-check"}
	imageProbeSlice(t, slice, c.WebhookIP2)
	r := framework.StartReplica(t, framework.ReplicaOptions{Name: "ray-webhook-image", Route: framework.RouteNone, Slice: slice})
	proc := "/proc/" + strconv.Itoa(r.Process.Pid())

	t.Run("runs-as-the-image-user", func(t *testing.T) {
		status, err := os.ReadFile(proc + "/status")
		if err != nil {
			t.Fatal(err)
		}
		uid, gid := field(string(status), "Uid:"), field(string(status), "Gid:")
		want := strings.SplitN(c.Image.User, ":", 2)
		if len(want) != 2 || uid != want[0] || gid != want[1] {
			t.Fatalf("the server runs as uid %s gid %s; the image's user is %q", uid, gid, c.Image.User)
		}
		if want[0] == "0" {
			t.Fatalf("the image's user is root (%s); the Deployment has runAsNonRoot", c.Image.User)
		}
		t.Logf("uid %s, gid %s, as the image's USER %s", uid, gid, c.Image.User)
	})

	t.Run("entrypoint-of-the-image", func(t *testing.T) {
		cmdline, err := os.ReadFile(proc + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		args := strings.Split(strings.TrimRight(string(cmdline), "\x00"), "\x00")
		if len(args) < len(c.Image.Entrypoint) || strings.Join(args[:len(c.Image.Entrypoint)], " ") != strings.Join(c.Image.Entrypoint, " ") {
			t.Fatalf("the server's command line %q does not start with the image's entrypoint %q", args, c.Image.Entrypoint)
		}
		root, err := os.Readlink(proc + "/root")
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Clean(root) != filepath.Clean(c.Image.Rootfs) {
			t.Fatalf("the server's root is %s, not the image's root filesystem %s", root, c.Image.Rootfs)
		}
		exe, err := os.Readlink(proc + "/exe")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(exe, filepath.Clean(c.Image.Rootfs)+"/") {
			t.Fatalf("the server's executable %s is not inside the image", exe)
		}
		t.Logf("%s inside the image, started as %q", strings.TrimPrefix(exe, filepath.Clean(c.Image.Rootfs)), args)
	})

	t.Run("read-only-root", func(t *testing.T) {
		// The mount the server sees at / (the last one listed on /), and the
		// Secret's at the entrypoint's --cert-dir, are read-only.
		mounts, err := os.ReadFile(proc + "/mountinfo")
		if err != nil {
			t.Fatal(err)
		}
		options := map[string]string{}
		for _, line := range strings.Split(string(mounts), "\n") {
			if f := strings.Fields(line); len(f) > 5 {
				options[f[4]] = f[5]
			}
		}
		certDir := ""
		for i, a := range c.Image.Entrypoint {
			if a == "--cert-dir" && i+1 < len(c.Image.Entrypoint) {
				certDir = c.Image.Entrypoint[i+1]
			}
		}
		for _, mount := range []string{"/", certDir} {
			opts, ok := options[mount]
			if !ok {
				t.Errorf("nothing is mounted at %q in the server's view", mount)
				continue
			}
			if !strings.HasPrefix(opts+",", "ro,") {
				t.Errorf("%q is mounted %s, not read-only", mount, opts)
			}
		}
		if _, err := os.Stat(proc + "/root" + certDir + "/tls.crt"); err != nil {
			t.Errorf("the serving Secret is not at the entrypoint's --cert-dir: %v", err)
		}
		t.Logf("/ mounted %s; the Secret at %s mounted %s", options["/"], certDir, options[certDir])
	})

	// Last: it kills the replica's first process.
	t.Run("kubelet-probes", func(t *testing.T) {
		readiness, liveness := c.Probes.Readiness, c.Probes.Liveness
		took := framework.WaitEndpointReady(t, slice, r.IP, true, 10*time.Second)
		t.Logf("ready in the EndpointSlice %v after the replica's readinessProbe (%s every %d s) succeeded",
			took.Round(time.Millisecond), readiness.HTTPGet.Path, readiness.PeriodSeconds)
		// A hung server: it answers no probe. The kubelet marks it not ready
		// after failureThreshold failed readiness probes, then kills it after
		// failureThreshold failed liveness probes and the grace period.
		first := r.Current()
		stopped := time.Now()
		if err := syscall.Kill(first.Pid(), syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		defer syscall.Kill(first.Pid(), syscall.SIGCONT)
		period := func(p *corev1.Probe) time.Duration {
			return time.Duration(p.FailureThreshold) * time.Duration(p.PeriodSeconds+p.TimeoutSeconds) * time.Second
		}
		took = framework.WaitEndpointReady(t, slice, r.IP, false, period(readiness)+5*time.Second)
		t.Logf("not ready %v after SIGSTOP (failureThreshold %d, periodSeconds %d, timeoutSeconds %d)",
			took.Round(time.Millisecond), readiness.FailureThreshold, readiness.PeriodSeconds, readiness.TimeoutSeconds)
		bound := period(liveness) + c.Probes.GracePeriod + time.Duration(readiness.PeriodSeconds)*time.Second + 15*time.Second
		deadline := time.Now().Add(bound)
		for r.Restarts() == 0 && time.Now().Before(deadline) {
			time.Sleep(200 * time.Millisecond)
		}
		if r.Restarts() != 1 {
			t.Fatalf("the hung replica was restarted %d times within %v; its log:\n%s", r.Restarts(), bound, first.Tail(5))
		}
		if !first.Exited() {
			t.Fatalf("the hung process %d still runs after its restart", first.Pid())
		}
		second := r.Current()
		framework.WaitEndpointReady(t, slice, r.IP, true, time.Until(deadline)+10*time.Second)
		if second.Pid() == first.Pid() {
			t.Fatalf("the replica runs the same process %d after its restart", first.Pid())
		}
		t.Logf("killed by its livenessProbe (%s every %d s, failureThreshold %d; grace %v) and restarted as process %d: ready again %v after SIGSTOP",
			liveness.HTTPGet.Path, liveness.PeriodSeconds, liveness.FailureThreshold, c.Probes.GracePeriod, second.Pid(),
			time.Since(stopped).Round(100*time.Millisecond))
	})
}

// imageProbeSlice makes Service probe-check and its EndpointSlice naming IP
// (not ready) in the slice's namespace.
func imageProbeSlice(t *testing.T, ref framework.SliceRef, ip string) {
	t.Helper()
	c := framework.Attach(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: ref.Name},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 443}}}}
	if _, err := c.Kube.CoreV1().Services(ref.Namespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	es := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: ref.Name, Labels: map[string]string{
			"kubernetes.io/service-name": ref.Name, "endpointslice.kubernetes.io/managed-by": "e2e.ray-webhook.io"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints: []discoveryv1.Endpoint{{Addresses: []string{ip},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(false)}}},
	}
	if _, err := c.Kube.DiscoveryV1().EndpointSlices(ref.Namespace).Create(ctx, es, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// field is the first value after KEY in /proc/PID/status.
func field(status, key string) string {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				return f[0]
			}
		}
	}
	return ""
}
