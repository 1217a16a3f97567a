package framework

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

const (
	webhookNamespace = "ray-webhook-system"
	// WebhookSlice is the EndpointSlice of Service ray-webhook that
	// BringUp writes (no Pod backs the Service, so no controller does).
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
	Args      []string // after "serve", without the certificate folder and the lookup's flags
	Env       []string
	// Process is the replica's process. A liveness failure replaces it
	// (the prober kills and restarts it): read it with Current while that
	// can happen.
	Process *Process
	t       testing.TB
	c       *Cluster
	name    string
	certDir string
	saDir   string
	api     string
	slice   SliceRef
	prober  *prober

	mu       sync.Mutex
	restarts int
}

// SliceRef names the EndpointSlice whose ready condition for a replica's
// address its readiness probe decides.
type SliceRef struct{ Namespace, Name string }

// ServiceSlice is EndpointSlice ray-webhook-e2e, the Service's.
var ServiceSlice = SliceRef{webhookNamespace, WebhookSlice}

// Route says where ReplicaOptions sends the webhook calls.
type Route int

const (
	// RouteAlone points EndpointSlice ray-webhook-e2e at the replica alone,
	// and back at the shipped replica when the test ends.
	RouteAlone Route = iota
	// RouteNone leaves the slice alone: the test routes (PointSlice).
	RouteNone
)

// ReplicaOptions is one ray-webhook replica to start. Zero fields take the
// shipped replica's values.
type ReplicaOptions struct {
	Name      string   // log name (default ray-webhook-replica)
	IP        string   // default WEBHOOK_IP2
	Port      int      // default a free port
	BaseArgs  []string // a Deployment's serve arguments in place of WEBHOOK_ARGS (nil: WEBHOOK_ARGS)
	Args      []string // after the base arguments (a later flag wins)
	Env       []string // KEY=VALUE after CLUSTER_DOMAIN=CLUSTER_DOMAIN
	CertDir   string   // default WEBHOOK_CERT_DIR
	SADir     string   // the lookup's ServiceAccount volume, default SA_DIR
	APIServer string   // the lookup's --kube-api-server, default APISERVER
	Route     Route
	Slice     SliceRef // where its readiness is published, default ray-webhook-system/ray-webhook-e2e
}

var replicaMu sync.Mutex

// WebhookReplica is StartReplica with extraArgs and env, routed alone.
func WebhookReplica(t testing.TB, extraArgs []string, env []string) *Replica {
	t.Helper()
	return StartReplica(t, ReplicaOptions{Args: extraArgs, Env: env})
}

// StartReplica starts ray-webhook serve as the Deployment runs it (from the
// image when the cluster has one, else RAY_WEBHOOK; serverCommand): its
// certificate folder, WEBHOOK_ARGS, then opts.Args, the second-head lookup
// given the API server and the ServiceAccount volume, --probe-port free),
// probes it as the kubelet would (the Deployment's probes, prober.go) and
// waits for its readinessProbe to succeed.
// With RouteAlone it points EndpointSlice ray-webhook-e2e at the replica
// alone and returns once kube-apiserver's webhook calls reach it (a dry-run
// Ray worker Pod shows up in its log); when t ends the slice is pointed back
// at WEBHOOK_IP:WEBHOOK_PORT and the calls are seen to reach WEBHOOK_LOG
// again. The replica is stopped when t ends. One replica at a time.
func StartReplica(t testing.TB, opts ReplicaOptions) *Replica {
	t.Helper()
	c := Attach(t)
	if !replicaMu.TryLock() {
		t.Fatalf("StartReplica: another replica started by this suite is still running")
	}
	t.Cleanup(replicaMu.Unlock)
	if opts.Name == "" {
		opts.Name = "ray-webhook-replica"
	}
	if opts.IP == "" {
		opts.IP = c.WebhookIP2
	}
	r, base := newReplica(t, c, opts)
	r.Start(t)

	if opts.Route == RouteAlone {
		// Registered after the process's Stop, so it runs before it.
		t.Cleanup(func() { restoreSlice(t, c) })
		PointSlice(t, r.Port, Endpoint{IP: r.IP, Ready: true})
		if why, ok := routedTo(c, r.Process.Log); !ok {
			t.Fatalf("EndpointSlice %s names %s:%d but the webhook calls do not reach the replica: %s; the end of %s:\n%s",
				WebhookSlice, r.IP, r.Port, why, r.Process.Log, r.Process.Tail(15))
		}
	}
	t.Logf("ray-webhook replica on %s:%d (args %s; log %s)",
		r.IP, r.Port, strings.Join(append(append([]string{}, base...), opts.Args...), " "), r.Process.Log)
	return r
}

// newReplica is a replica of OPTS (its defaults filled in; a free port when
// none is given, its own probe port), not yet started, and the base
// arguments it was given.
func newReplica(t testing.TB, c *Cluster, opts ReplicaOptions) (*Replica, []string) {
	if opts.CertDir == "" {
		opts.CertDir = c.WebhookCertDir
	}
	if opts.SADir == "" {
		opts.SADir = c.SADir
	}
	if opts.APIServer == "" {
		opts.APIServer = c.APIServer
	}
	if opts.Slice == (SliceRef{}) {
		opts.Slice = ServiceSlice
	}
	r := &Replica{IP: opts.IP, Port: opts.Port, t: t, c: c, name: opts.Name, slice: opts.Slice}
	if r.Port == 0 {
		r.Port = freePort(t, r.IP)
	}
	r.ProbePort = freePort(t, r.IP)
	for r.ProbePort == r.Port {
		r.ProbePort = freePort(t, r.IP)
	}
	base := c.WebhookArgs
	if opts.BaseArgs != nil {
		base = opts.BaseArgs
	}
	r.Args = append([]string{"--bind", r.IP, "--port", itoa(r.Port)}, base...)
	r.Args = append(r.Args, opts.Args...)
	r.Args = append(r.Args, "--probe-port="+itoa(r.ProbePort))
	r.Env = append([]string{"CLUSTER_DOMAIN=" + c.ClusterDomain}, opts.Env...)
	r.certDir, r.saDir, r.api = opts.CertDir, opts.SADir, opts.APIServer
	return r, base
}

// Start starts the replica's process (again, after Stop: the same address,
// port, arguments and environment; a new log file) and waits for /readyz.
func (r *Replica) Start(t testing.TB) {
	t.Helper()
	c := Attach(t)
	if r.Process != nil && !r.Process.Exited() {
		t.Fatalf("replica on %s:%d is already running", r.IP, r.Port)
	}
	cmd, err := serverCommand(c.Image, c.RayWebhook, c.APIServer, r.certDir, r.saDir, r.api, r.Args, r.Env)
	if err != nil {
		t.Fatalf("replica on %s:%d: %v", r.IP, r.Port, err)
	}
	p := start(t, c, r.name, cmd)
	r.mu.Lock()
	r.Process = p
	r.mu.Unlock()
	if r.prober == nil {
		r.prober = newProber(r.name, r.IP, r.ProbePort, c.Probes, c.probeAgent(), r, func(ready bool) {
			if err := setEndpointReady(c.Kube, r.slice, r.IP, ready); err != nil {
				appendLog(r.Current().Log, "publishing ready=%v in EndpointSlice %s/%s: %v", ready, r.slice.Namespace, r.slice.Name, err)
			}
		})
		registerProber(r.IP, r.prober)
		t.Cleanup(func() {
			r.prober.stop()
			unregisterProber(r.IP, r.prober)
			r.Current().Stop()
		})
	}
	if err := r.prober.waitReady(30 * time.Second); err != nil {
		t.Fatalf("replica on %s:%d: %v", r.IP, r.Port, err)
	}
}

// Stop sends SIGTERM and waits for the replica to drain and exit.
func (r *Replica) Stop() { r.Current().Stop() }

// Current is the replica's process now.
func (r *Replica) Current() *Process {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.Process
}

// Restarts is how many times a failed livenessProbe restarted the replica.
func (r *Replica) Restarts() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.restarts
}

// Ready is the replica's readiness as its probes last decided it.
func (r *Replica) Ready() bool { return r.prober.Ready() }

func (r *Replica) current() *daemon { return r.Current().d }

// restart is the kubelet's restart of a container that failed its
// livenessProbe: the process stopped within GRACE, the same command started
// again with a new log file.
func (r *Replica) restart(grace time.Duration) error {
	old := r.Current()
	old.d.stopGracefully(grace)
	cmd, err := serverCommand(r.c.Image, r.c.RayWebhook, r.c.APIServer, r.certDir, r.saDir, r.api, r.Args, r.Env)
	if err != nil {
		return err
	}
	log := logFile(r.c, r.name)
	d, err := launch(r.name, log, cmd, false, fmt.Sprintf("# %s: restarted after a failed livenessProbe: %s\n",
		time.Now().UTC().Format(time.RFC3339), strings.Join(cmd.Args, " ")))
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.Process = &Process{Name: r.name, Log: log, d: d}
	r.restarts++
	r.mu.Unlock()
	return nil
}

// Endpoint is one address of EndpointSlice ray-webhook-e2e.
type Endpoint struct {
	IP    string
	Ready bool // false: as while its Pod terminates
}

// PointSlice makes EndpointSlice ray-webhook-e2e name ENDPOINTS at PORT
// (port "https"), as the endpoint controller would publish ready and
// terminating replicas (a replica's Ready is also its readinessProbe's). The first call of a test registers the switch back
// to the shipped replica (and the check that calls reach it) for when t ends.
func PointSlice(t testing.TB, port int, endpoints ...Endpoint) {
	t.Helper()
	c := Attach(t)
	sliceMu.Lock()
	if !sliceRestore[t] {
		sliceRestore[t] = true
		t.Cleanup(func() {
			sliceMu.Lock()
			delete(sliceRestore, t)
			sliceMu.Unlock()
			restoreSlice(t, c)
		})
	}
	sliceMu.Unlock()
	if err := pointSlice(c, port, endpoints); err != nil {
		t.Fatalf("pointing EndpointSlice %s at %v port %d: %v", WebhookSlice, endpoints, port, err)
	}
}

var (
	sliceMu      sync.Mutex
	sliceRestore = map[testing.TB]bool{}
)

func restoreSlice(t testing.TB, c *Cluster) {
	if err := pointSlice(c, c.WebhookPort, []Endpoint{{IP: c.WebhookIP, Ready: true}}); err != nil {
		t.Errorf("pointing EndpointSlice %s back at %s:%d: %v", WebhookSlice, c.WebhookIP, c.WebhookPort, err)
		return
	}
	if why, ok := routedTo(c, c.WebhookLog); !ok {
		t.Errorf("after pointing EndpointSlice %s back at %s:%d the webhook calls do not reach it: %s",
			WebhookSlice, c.WebhookIP, c.WebhookPort, why)
	}
}

// RoutedTo fails t unless kube-apiserver's webhook calls reach the replica
// that logs to LOG within 30 s (dry-run Ray worker Pods in namespace default).
func RoutedTo(t testing.TB, log string) {
	t.Helper()
	if why, ok := routedTo(Attach(t), log); !ok {
		t.Fatalf("the webhook calls do not reach %s: %s", log, why)
	}
}

// pointSlice makes EndpointSlice ray-webhook-e2e name ENDPOINTS at PORT
// (port "https"); an endpoint is ready only if its replica's readinessProbe
// says so too (for a replica this process probes).
func pointSlice(c *Cluster, port int, endpoints []Endpoint) error {
	sliceWriteMu.Lock()
	defer sliceWriteMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	slices := c.Kube.DiscoveryV1().EndpointSlices(webhookNamespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := slices.Get(ctx, WebhookSlice, metav1.GetOptions{})
		if err != nil {
			return err
		}
		s.Endpoints = nil
		for _, e := range endpoints {
			s.Endpoints = append(s.Endpoints, discoveryv1.Endpoint{
				Addresses:  []string{e.IP},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(e.Ready && probedReady(e.IP))},
			})
		}
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

var (
	// sliceWriteMu orders this process's writes of EndpointSlices: a
	// readiness change is not overwritten by a PointSlice that read it before.
	sliceWriteMu sync.Mutex
	probersMu    sync.Mutex
	probers      = map[string]*prober{} // by replica address
)

func registerProber(ip string, p *prober) {
	probersMu.Lock()
	defer probersMu.Unlock()
	probers[ip] = p
}

func unregisterProber(ip string, p *prober) {
	probersMu.Lock()
	defer probersMu.Unlock()
	if probers[ip] == p {
		delete(probers, ip)
	}
}

// probedReady is the readiness of the replica at IP that this process
// probes; true for an address it does not probe.
func probedReady(ip string) bool {
	probersMu.Lock()
	p := probers[ip]
	probersMu.Unlock()
	return p == nil || p.Ready()
}

// setEndpointReady sets the ready condition of IP in EndpointSlice REF, as
// the endpoint controller publishes a Pod's readiness; a slice that does not
// list IP (or does not exist) is left alone.
func setEndpointReady(kube kubernetes.Interface, ref SliceRef, ip string, ready bool) error {
	sliceWriteMu.Lock()
	defer sliceWriteMu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	slices := kube.DiscoveryV1().EndpointSlices(ref.Namespace)
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := slices.Get(ctx, ref.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		changed := false
		for i, e := range s.Endpoints {
			if len(e.Addresses) > 0 && e.Addresses[0] == ip && (e.Conditions.Ready == nil || *e.Conditions.Ready != ready) {
				s.Endpoints[i].Conditions.Ready = ptr.To(ready)
				changed = true
			}
		}
		if !changed {
			return nil
		}
		_, err = slices.Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
}

// EndpointReady is the ready condition of IP in EndpointSlice REF (false
// when the slice or the address is missing).
func EndpointReady(t testing.TB, ref SliceRef, ip string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Attach(t).Kube.DiscoveryV1().EndpointSlices(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	for _, e := range s.Endpoints {
		if len(e.Addresses) > 0 && e.Addresses[0] == ip {
			return e.Conditions.Ready != nil && *e.Conditions.Ready
		}
	}
	return false
}

// WaitEndpointReady waits until EndpointReady is WANT, failing t after
// TIMEOUT; it returns how long that took.
func WaitEndpointReady(t testing.TB, ref SliceRef, ip string, want bool, timeout time.Duration) time.Duration {
	t.Helper()
	begin := time.Now()
	for !time.Now().After(begin.Add(timeout)) {
		if EndpointReady(t, ref, ip) == want {
			return time.Since(begin)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("EndpointSlice %s/%s: %s did not become ready=%v within %v", ref.Namespace, ref.Name, ip, want, timeout)
	return 0
}

func randomSuffix() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
