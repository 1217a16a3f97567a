package framework

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// The kubelet's part for the replicas this framework runs, since no kubelet
// runs them: the Deployment's readinessProbe and livenessProbe, probed as
// the kubelet's prober worker does (pkg/kubelet/prober/worker.go@v1.37.2):
//   - a container starts not ready, and its readiness is probed at once;
//   - then each probe runs every periodSeconds, none before initialDelaySeconds;
//   - a result counts once it repeats successThreshold (success) or
//     failureThreshold (failure) times in a row;
//   - a liveness failure kills the container (SIGTERM, then SIGKILL after
//     terminationGracePeriodSeconds) and starts it again.
// The request is the kubelet's (pkg/probe/http@v1.37.2): GET with User-Agent
// kube-probe/MAJOR.MINOR and Accept */*, within timeoutSeconds, succeeding
// on 200 to 399, following no redirect to another host. Readiness is what
// the endpoint controller publishes: each change sets the ready condition of
// the replica's address in its EndpointSlice.

// ProbeSpec is what the Deployment asks the kubelet to probe. Both probes
// must be httpGet probes of the port --probe-port serves; a replica here has
// its own probe port, which is probed in its place.
type ProbeSpec struct {
	Readiness   *corev1.Probe
	Liveness    *corev1.Probe
	GracePeriod time.Duration // terminationGracePeriodSeconds
}

// probeSpecOf reads the probes of the Deployment's first container, and
// checks they probe the port its --probe-port flag names (a probe of another
// port would never see the server ready).
func probeSpecOf(deployment []byte) (ProbeSpec, error) {
	var d appsv1.Deployment
	if err := json.Unmarshal(deployment, &d); err != nil {
		return ProbeSpec{}, err
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) == 0 {
		return ProbeSpec{}, fmt.Errorf("the Deployment has no container")
	}
	c := pod.Containers[0]
	spec := ProbeSpec{Readiness: c.ReadinessProbe, Liveness: c.LivenessProbe, GracePeriod: 30 * time.Second}
	if pod.TerminationGracePeriodSeconds != nil {
		spec.GracePeriod = time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	}
	probePort := -1
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--probe-port="); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return ProbeSpec{}, fmt.Errorf("the Deployment's %s is not a port", a)
			}
			probePort = n
		}
	}
	for kind, p := range map[string]*corev1.Probe{"readinessProbe": spec.Readiness, "livenessProbe": spec.Liveness} {
		if p == nil || p.HTTPGet == nil {
			return ProbeSpec{}, fmt.Errorf("the Deployment's container has no httpGet %s", kind)
		}
		port, err := containerPort(c, p.HTTPGet.Port)
		if err != nil {
			return ProbeSpec{}, fmt.Errorf("the Deployment's %s: %v", kind, err)
		}
		if port != probePort {
			return ProbeSpec{}, fmt.Errorf("the Deployment's %s probes port %d, but its --probe-port is %d", kind, port, probePort)
		}
		defaultProbe(p)
	}
	return spec, nil
}

// containerPort resolves a probe's port (a number or a containerPort's name).
func containerPort(c corev1.Container, port intstr.IntOrString) (int, error) {
	if port.Type == intstr.Int {
		return port.IntValue(), nil
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return int(p.ContainerPort), nil
		}
	}
	return 0, fmt.Errorf("no containerPort is named %q", port.StrVal)
}

// defaultProbe fills in the API's defaults (pkg/apis/core/v1/defaults.go@v1.37.2),
// which a client-side render does not apply.
func defaultProbe(p *corev1.Probe) {
	def := func(v *int32, d int32) {
		if *v == 0 {
			*v = d
		}
	}
	def(&p.PeriodSeconds, 10)
	def(&p.TimeoutSeconds, 1)
	def(&p.SuccessThreshold, 1)
	def(&p.FailureThreshold, 3)
	if p.HTTPGet == nil {
		return
	}
	if p.HTTPGet.Path == "" {
		p.HTTPGet.Path = "/"
	}
	if p.HTTPGet.Scheme == "" {
		p.HTTPGet.Scheme = corev1.URISchemeHTTP
	}
}

// container is what a prober keeps running: its current process, started
// again by restart.
type container interface {
	// current is the running process's daemon.
	current() *daemon
	// restart stops the process (SIGTERM, SIGKILL after GRACE) and starts it again.
	restart(grace time.Duration) error
}

// prober probes one replica's container at HOST:PORT until stopped.
type prober struct {
	name      string
	host      string
	port      int
	spec      ProbeSpec
	userAgent string
	box       container
	// onReadiness publishes a change of readiness (the endpoint controller's part).
	onReadiness func(ready bool)

	mu       sync.Mutex
	ready    bool
	changed  chan struct{} // closed and replaced on every readiness change
	lastErr  string
	stopOnce sync.Once
	stopCh   chan struct{}
	done     sync.WaitGroup
}

func newProber(name, host string, port int, spec ProbeSpec, userAgent string, box container, onReadiness func(bool)) *prober {
	p := &prober{name: name, host: host, port: port, spec: spec, userAgent: userAgent, box: box,
		onReadiness: onReadiness, changed: make(chan struct{}), stopCh: make(chan struct{})}
	p.done.Add(2)
	go p.work(false, spec.Readiness)
	go p.work(true, spec.Liveness)
	return p
}

// Ready is the replica's readiness as last published.
func (p *prober) Ready() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ready
}

// waitReady waits until the replica is ready, failing when its process
// exits first or TIMEOUT passes (with the last probe's outcome).
func (p *prober) waitReady(timeout time.Duration) error {
	deadline := time.After(timeout)
	for {
		p.mu.Lock()
		ready, changed, last := p.ready, p.changed, p.lastErr
		p.mu.Unlock()
		if ready {
			return nil
		}
		d := p.box.current()
		select {
		case <-changed:
		case <-d.done:
			return fmt.Errorf("%s exited (%v) before its readinessProbe succeeded; the end of %s:\n%s", d.name, d.err, d.log, d.tail())
		case <-deadline:
			return fmt.Errorf("%s: the readinessProbe did not succeed within %v (%s); the end of %s:\n%s", d.name, timeout, last, d.log, d.tail())
		}
	}
}

func (p *prober) stop() {
	p.stopOnce.Do(func() { close(p.stopCh) })
	p.done.Wait()
}

func (p *prober) setReady(ready bool) {
	p.mu.Lock()
	if p.ready == ready {
		p.mu.Unlock()
		return
	}
	p.ready = ready
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
	if p.onReadiness != nil {
		p.onReadiness(ready)
	}
}

// work is one probe's worker. A new process (a restart, by the prober or
// the test) resets its counts; a new process starts not ready and has its
// readiness probed at once.
func (p *prober) work(liveness bool, spec *corev1.Probe) {
	defer p.done.Done()
	period := time.Duration(spec.PeriodSeconds) * time.Second
	var seen *daemon
	var started time.Time
	lastOK, run := false, 0
	for {
		d := p.box.current()
		if d != seen {
			seen, started, run = d, time.Now(), 0
			if !liveness {
				p.setReady(false)
			}
		}
		if !d.exited() && time.Since(started) >= time.Duration(spec.InitialDelaySeconds)*time.Second {
			ok, why := p.probeOnce(spec)
			if !liveness {
				p.mu.Lock()
				p.lastErr = why
				p.mu.Unlock()
			}
			if ok == lastOK && run > 0 {
				run++
			} else {
				lastOK, run = ok, 1
			}
			switch {
			case !liveness && ok && run >= int(spec.SuccessThreshold):
				p.setReady(true)
			case !liveness && !ok && run >= int(spec.FailureThreshold):
				p.setReady(false)
			case liveness && !ok && run >= int(spec.FailureThreshold):
				appendLog(d.log, "livenessProbe failed %d times (%s): killing and restarting the container", run, why)
				if err := p.box.restart(p.spec.GracePeriod); err != nil {
					appendLog(d.log, "restarting %s: %v", p.name, err)
				}
				run = 0
				continue
			}
		} else if d.exited() && !liveness {
			p.setReady(false)
		}
		// The next probe is one period on, or at once for a new process.
		for next := time.Now().Add(period); time.Now().Before(next) && p.box.current() == seen; {
			select {
			case <-p.stopCh:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}

// probeOnce sends one kubelet probe request.
func (p *prober) probeOnce(spec *corev1.Probe) (bool, string) {
	g := spec.HTTPGet
	host := p.host
	if g.Host != "" {
		host = g.Host
	}
	url := strings.ToLower(string(g.Scheme)) + "://" + net.JoinHostPort(host, strconv.Itoa(p.port)) + g.Path
	timeout := time.Duration(spec.TimeoutSeconds) * time.Second
	client := &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true, DisableCompression: true,
			TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}, // the kubelet does not verify a probe's certificate
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if req.URL.Hostname() != host {
				return http.ErrUseLastResponse
			}
			if len(via) >= 10 {
				return fmt.Errorf("stopped after 10 redirects")
			}
			return nil
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err.Error()
	}
	req.Header.Set("User-Agent", p.userAgent)
	req.Header.Set("Accept", "*/*")
	for _, h := range g.HTTPHeaders {
		req.Header.Set(h.Name, h.Value)
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err.Error()
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 10<<10))
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		return true, resp.Status
	}
	return false, "HTTP probe failed with statuscode: " + strconv.Itoa(resp.StatusCode)
}

// appendLog adds a line "# TIME: MESSAGE" to a process's log, as the
// kubelet's events would tell of it.
func appendLog(log, format string, args ...any) {
	f, err := os.OpenFile(log, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "# %s: %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
}

// kubeProbeAgent is the kubelet's probe User-Agent for a cluster whose API
// server reports GITVERSION (v1.37.2 gives kube-probe/1.37).
func kubeProbeAgent(gitVersion string) string {
	v := strings.SplitN(strings.TrimPrefix(gitVersion, "v"), ".", 3)
	if len(v) < 2 {
		return "kube-probe/unknown"
	}
	return "kube-probe/" + v[0] + "." + v[1]
}
