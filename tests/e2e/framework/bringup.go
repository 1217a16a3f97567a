package framework

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// BringUpOptions says where the binaries are and where the cluster lives.
// Zero fields take the defaults named beside them.
type BringUpOptions struct {
	Repo       string    // the source tree (deploy/, certs/); required
	E2EDir     string    // default REPO/tests/e2e
	Bin        string    // the Go binaries (scripts/e2e.sh --build), default E2E_DIR/.bin
	RayWebhook string    // the server binary, default REPO/build/ray-webhook
	Work       string    // the run's directory, default a new /tmp/ray-webhook-e2e.XXXXXX
	PodCIDR    string    // KWOK's Pod range, made local to this machine; default the first free /22 of 10.200.64.0/18
	Image      string    // ray-webhook's OCI archive (scripts/image.sh): the replicas run from it; "" runs RayWebhook
	RayVenv    string    // Ray's virtual environment (RayPods), default rayVenv()
	Log        io.Writer // progress lines, default os.Stderr
	// Detached gives every process its own process group, so it outlives
	// the caller (e2e-cluster up); otherwise a ^C of the caller stops them.
	Detached bool
	// APIServerProfiling serves kube-apiserver's /debug/pprof (off otherwise,
	// as in a hardened cluster): bench/apiserver.sh profiles the webhook client.
	APIServerProfiling bool
}

// Running is a cluster BringUp started: its processes, in start order, and
// what it changed on this machine (a network namespace, a local route,
// kube-proxy's rules).
type Running struct {
	Work       string
	ClusterEnv string // WORK/cluster.env, for Attach (E2E_CLUSTER_ENV)

	opts     BringUpOptions
	procsMu  sync.Mutex
	procs    []*daemon
	netns    string
	route    string
	image    *Image
	registry *Registry
	env      clusterEnv
	// webhookProber probes the shipped replica while this process runs.
	webhookProber *prober
}

// daemon is a started process and its end. A cluster's (LOGS/NAME.log)
// belongs to no test: it lives until Running.Stop, or, once recorded in
// WORK/processes, until `e2e-cluster down`; a test's is wrapped in Process.
type daemon struct {
	name string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
}

// serviceRange is only allocated from (ClusterIPs); nothing is routed to it.
const (
	serviceRange = "10.200.128.0/20"
	serviceIP    = "10.200.128.1"
	// KwokNode is the one simulated node; its Pods get addresses in POD_CIDR.
	KwokNode = "kwok-node-0"
	// kwokTaint keeps every Pod that does not tolerate it Pending: the checks
	// written for a cluster without nodes need that (a Pod bound to no node
	// keeps the phase a check writes).
	kwokTaint = "e2e.ray-webhook.io/kwok"
)

// BringUp starts the whole cluster: PKI, the
// network namespace and the local Pod range, etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, KWOK's node, kube-proxy, CoreDNS,
// the Ray stand-in, then deploy/ installed as shipped with ray-webhook
// serving it. It
// writes WORK/cluster.env. On an error, what was started is stopped again.
func BringUp(opts BringUpOptions) (r *Running, err error) {
	if opts.Repo == "" {
		return nil, fmt.Errorf("BringUp: Repo is required")
	}
	if opts.E2EDir == "" {
		opts.E2EDir = filepath.Join(opts.Repo, "tests", "e2e")
	}
	if opts.Bin == "" {
		opts.Bin = filepath.Join(opts.E2EDir, ".bin")
	}
	if opts.RayWebhook == "" {
		opts.RayWebhook = filepath.Join(opts.Repo, "build", "ray-webhook")
	}
	if opts.Log == nil {
		opts.Log = os.Stderr
	}
	if opts.RayVenv == "" {
		opts.RayVenv = defaultRayVenv(opts.E2EDir)
	}
	if opts.Work == "" {
		if opts.Work, err = os.MkdirTemp("", "ray-webhook-e2e."); err != nil {
			return nil, err
		}
	}
	for _, d := range []string{"logs", "pki"} {
		if err := os.MkdirAll(filepath.Join(opts.Work, d), 0o755); err != nil {
			return nil, err
		}
	}
	r = &Running{Work: opts.Work, ClusterEnv: filepath.Join(opts.Work, "cluster.env"), opts: opts}
	defer func() {
		if err != nil {
			r.logf("bring-up failed: %v (logs in %s)", err, r.path("logs"))
			r.Stop(true)
			r = nil
		}
	}()
	steps := []struct {
		what string
		run  func() error
	}{
		{"copying ray-webhook", r.copyServer},
		{"making certificates", r.makePKI},
		{"starting the registry; pushing, signing, verifying and pulling ray-webhook's image", r.startRegistry},
		{"making the network namespace", r.makeNetns},
		{"making the Pod range local", r.makePodRange},
		{"starting etcd", r.startEtcd},
		{"starting kube-apiserver", r.startAPIServer},
		{"starting kube-controller-manager", r.startControllerManager},
		{"starting kube-scheduler", r.startScheduler},
		{"starting KWOK", r.startKwok},
		{"starting kube-proxy", r.startKubeProxy},
		{"starting CoreDNS", r.startCoreDNS},
		{"starting the Ray stand-in", r.startRayStandin},
		{"installing deploy/", r.installDeploy},
		{"writing cluster.env", r.writeClusterEnv},
		{"writing stop.sh", r.writeStopScript},
	}
	for _, s := range steps {
		if err := s.run(); err != nil {
			return r, fmt.Errorf("%s: %w", s.what, err)
		}
	}
	return r, nil
}

func (r *Running) logf(format string, args ...any) {
	fmt.Fprintf(r.opts.Log, "%s e2e: %s\n", time.Now().UTC().Format("15:04:05"), fmt.Sprintf(format, args...))
}

func (r *Running) path(elem ...string) string {
	return filepath.Join(append([]string{r.Work}, elem...)...)
}
func (r *Running) bin(name string) string { return filepath.Join(r.opts.Bin, name) }

// copyServer runs a copy of the server: build/ may be rebuilt while the suite runs.
func (r *Running) copyServer() error {
	dst := r.path("ray-webhook")
	var out []byte
	var err error
	// A build writing the binary right now: try again a while.
	for i := 0; i < 20; i++ {
		var b []byte
		if b, err = os.ReadFile(r.opts.RayWebhook); err == nil {
			if err = os.WriteFile(dst, b, 0o755); err == nil {
				if out, err = exec.Command(dst, "--version").CombinedOutput(); err == nil {
					break
				}
			}
		}
		time.Sleep(3 * time.Second)
	}
	if err != nil {
		return fmt.Errorf("cannot run a copy of %s: %v: %s", r.opts.RayWebhook, err, out)
	}
	r.env.rayWebhook = dst
	r.logf("ray-webhook: %s (%s)", r.opts.RayWebhook, strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0]))
	return nil
}

// spawn starts NAME with ARGS (env added to this process's), logging to
// LOGS/NAME.log (in its own process group when Detached).
func (r *Running) spawn(name string, env []string, path string, args ...string) (*daemon, error) {
	cmd := exec.Command(path, args...)
	cmd.Env = append(os.Environ(), env...)
	d, err := r.spawnCmd(name, cmd)
	if err != nil {
		return nil, err
	}
	return d, r.addProcess(d)
}

// addProcess records D among the cluster's processes (WORK/processes).
func (r *Running) addProcess(d *daemon) error {
	r.procsMu.Lock()
	r.procs = append(r.procs, d)
	r.procsMu.Unlock()
	return r.recordProcesses()
}

// spawnCmd starts cmd with its output in LOGS/NAME.log.
func (r *Running) spawnCmd(name string, cmd *exec.Cmd) (*daemon, error) {
	return launch(name, r.path("logs", name+".log"), cmd, r.opts.Detached, "")
}

// launch starts cmd with its output appended to LOG (after HEADER), in a
// process group of its own when detached, and reaps it when it exits.
func launch(name, log string, cmd *exec.Cmd, detached bool, header string) (*daemon, error) {
	d := &daemon{name: name, log: log, cmd: cmd, done: make(chan struct{})}
	f, err := os.OpenFile(log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%s: log file: %v", name, err)
	}
	f.WriteString(header)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: detached}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("starting %s: %v", name, err)
	}
	go func() {
		d.err = cmd.Wait()
		f.Close()
		close(d.done)
	}()
	return d, nil
}

func (d *daemon) exited() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

func (d *daemon) tail() string {
	b, _ := os.ReadFile(d.log)
	return lastLines(string(b), 20)
}

// probe is what waitReady asks of an HTTP(S) endpoint.
type probe struct {
	url    string
	client *http.Client
}

func plainProbe(url string) probe {
	return probe{url: url, client: &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil}}}
}

func tlsProbe(url string, cfg *tls.Config) probe {
	return probe{url: url, client: &http.Client{Timeout: 2 * time.Second,
		Transport: &http.Transport{Proxy: nil, TLSClientConfig: cfg}}}
}

// waitReady polls p until it answers 200, giving up when d exits first (with
// the end of its log) or the timeout passes.
func (d *daemon) waitReady(p probe, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	last := "no answer yet"
	for time.Now().Before(deadline) {
		if d.exited() {
			return fmt.Errorf("%s exited (%v) before %s answered; the end of %s:\n%s", d.name, d.err, p.url, d.log, d.tail())
		}
		resp, err := p.client.Get(p.url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(250 * time.Millisecond)
	}
	return fmt.Errorf("%s: %s did not answer 200 within %v (%s); the end of %s:\n%s", d.name, p.url, timeout, last, d.log, d.tail())
}

// stop sends SIGTERM and waits up to 40 s (ray-webhook drains for 5 s), then SIGKILL.
func (d *daemon) stop() { d.stopGracefully(40 * time.Second) }

// stopGracefully sends SIGTERM and, if the process still runs after GRACE,
// SIGKILL, as the kubelet stops a container; it waits for the end.
func (d *daemon) stopGracefully(grace time.Duration) {
	if d.exited() {
		return
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.done:
	case <-time.After(grace):
		_ = d.cmd.Process.Kill()
		<-d.done
	}
}

// loopbackPort is a TCP port free on 127.0.0.1 now (the kernel's pick).
func loopbackPort() (int, error) {
	return portOn("127.0.0.1")
}

func portOn(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// kubectl runs the cluster's kubectl with the admin kubeconfig; stdin may be empty.
func (r *Running) kubectl(stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, r.bin("kubectl"), append([]string{"--kubeconfig", r.path("kubeconfig")}, args...)...)
	if stdin != "" {
		cmd.Stdin = strings.NewReader(stdin)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %v: %s", strings.Join(args, " "), err, lastLines(string(out), 10))
	}
	return string(out), nil
}

// Stop stops every process in the reverse of its start order, removes the
// network namespace, the local route and kube-proxy's rules, and deletes WORK
// (with the unpacked image) unless keepWork.
func (r *Running) Stop(keepWork bool) {
	if r.webhookProber != nil {
		r.webhookProber.stop()
	}
	r.procsMu.Lock()
	defer r.procsMu.Unlock()
	for i := len(r.procs) - 1; i >= 0; i-- {
		r.procs[i].stop()
	}
	r.procs = nil
	r.removeNetwork()
	os.Remove(r.path("processes"))
	os.Remove(r.path("network"))
	if !keepWork {
		os.RemoveAll(r.Work)
	}
}

// Detach forgets the processes without stopping them: `e2e-cluster down`
// stops them later from WORK/processes.
func (r *Running) Detach() {
	if r.webhookProber != nil {
		r.webhookProber.stop()
	}
	r.procsMu.Lock()
	defer r.procsMu.Unlock()
	r.procs = nil
}

// recordProcesses writes WORK/processes, "PID START NAME" a line in start order,
// and WORK/network, what StopRecorded removes besides (the namespace and the
// route); both are rewritten on each change.
func (r *Running) recordProcesses() error {
	r.procsMu.Lock()
	defer r.procsMu.Unlock()
	var b strings.Builder
	for _, d := range r.procs {
		fmt.Fprintln(&b, processLine(d))
	}
	if err := os.WriteFile(r.path("processes"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(r.path("network"), []byte("netns="+r.netns+"\nroute="+r.route+"\n"), 0o644)
}

// StopRecorded stops what a BringUp in another process left running in WORK
// (its WORK/processes and WORK/network, and kube-proxy's rules when its
// kube-proxy ran them), and deletes WORK unless keepWork.
func StopRecorded(work string, keepWork bool) error {
	b, err := os.ReadFile(filepath.Join(work, "processes"))
	if err != nil {
		return err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		var pid int
		var started, name string
		if _, err := fmt.Sscan(lines[i], &pid, &started, &name); err != nil || pid <= 1 {
			continue
		}
		// The pid may have been reused since: only the process started then.
		if startTime(pid) == started {
			stopPid(pid)
		}
	}
	n, _ := os.ReadFile(filepath.Join(work, "network"))
	r := &Running{Work: work, opts: BringUpOptions{Log: os.Stderr}}
	for _, line := range strings.Split(string(n), "\n") {
		if v, ok := strings.CutPrefix(line, "netns="); ok {
			r.netns = v
		}
		if v, ok := strings.CutPrefix(line, "route="); ok {
			r.route = v
		}
	}
	r.removeNetwork()
	removePodLeftovers(r.logf)
	os.Remove(filepath.Join(work, "processes"))
	os.Remove(filepath.Join(work, "network"))
	if !keepWork {
		return os.RemoveAll(work)
	}
	return nil
}

// processLine is d's line in WORK/processes.
func processLine(d *daemon) string {
	pid := d.cmd.Process.Pid
	return fmt.Sprintf("%d %s %s", pid, startTime(pid), d.name)
}

// startTime is field 22 of /proc/PID/stat, when the process started (in
// clock ticks since boot), or "-" when it is gone.
func startTime(pid int) string {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return "-"
	}
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return "-"
	}
	// After "pid (comm) ": state is field 3, starttime field 22.
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return "-"
	}
	return fields[19]
}

// stopPid is daemon.stop for a process this one did not start (init reaps it).
func stopPid(pid int) {
	alive := func() bool {
		if syscall.Kill(pid, 0) != nil {
			return false
		}
		stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return false
		}
		// A zombie (state Z, after the command name in parentheses) has exited.
		s := string(stat)
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) && s[i+2] == 'Z' {
			return false
		}
		return true
	}
	if !alive() {
		return
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if !alive() {
			return
		}
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
}

// writeStopScript writes WORK/stop.sh: `e2e-cluster down` of this WORK, for
// a cluster left running (e2e-cluster up, E2E_KEEP=1).
func (r *Running) writeStopScript() error {
	script := fmt.Sprintf("#!/bin/sh\n# Stops the end-to-end cluster of this directory and deletes the directory.\nexec %s down --work %s\n",
		r.bin("e2e-cluster"), r.Work)
	return os.WriteFile(r.path("stop.sh"), []byte(script), 0o755)
}

// KeepOperator installs the CRDs of KubeRay RELEASE on the cluster running
// in WORK and leaves its operator running there (own process group, log
// LOGS/operator-RELEASE.log), recorded in WORK/processes so that
// StopRecorded stops it first.
func KeepOperator(work, release string) error {
	c, err := readClusterFile(filepath.Join(work, "cluster.env"))
	if err != nil {
		return err
	}
	dir, err := operatorCRDDir(c, release)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := c.kubectl(ctx, "apply", "--server-side", "--force-conflicts", "-f", dir); err != nil {
		return err
	}
	if _, err := c.kubectl(ctx, "wait", "--for", "condition=established", "--timeout=60s", "-f", dir); err != nil {
		return err
	}
	metrics, err := loopbackPort()
	if err != nil {
		return err
	}
	probePort, err := loopbackPort()
	if err != nil {
		return err
	}
	r := &Running{Work: work, opts: BringUpOptions{Bin: c.Bin, Detached: true, Log: os.Stderr}}
	cmd := operatorCommand(c, release, metrics, probePort)
	d, err := r.spawnCmd("operator-"+release, cmd)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(work, "processes"), os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	fmt.Fprintln(f, processLine(d))
	f.Close()
	return d.waitReady(plainProbe(fmt.Sprintf("http://127.0.0.1:%d/readyz", probePort)), 90*time.Second)
}

// kube is a client of the cluster with the admin kubeconfig.
func (r *Running) kube() (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", r.path("kubeconfig"))
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}
