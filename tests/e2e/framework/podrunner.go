package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// RunLabel marks the Pods whose Ray container RayPods runs: a RayCluster's
// Pod templates carry RunLabel: RunLabelValue, the operator copies it to the
// Pods it builds.
const (
	RunLabel      = "e2e.ray-webhook.io/run"
	RunLabelValue = "ray"
)

// RayPods does for the marked Pods of one namespace what a kubelet and a CNI
// plugin do for their Ray container (KubeRay's container 0), with Ray
// installed from PyPI (RAY_VENV) in place of the image:
//
//   - once KWOK reports the Pod Running with an IP, it gets a network
//     namespace holding that IP (a veth pair; the host routes the /32 to it,
//     overriding the Pod range's local route, and forwards only between the
//     suite's own addresses), its own /tmp, /dev/shm, /home and hostname, and
//     the /etc/resolv.conf and /etc/hosts a kubelet writes for its dnsPolicy
//     and dnsConfig;
//   - the command and args run exactly as the Pod has them ($(VAR) expanded
//     as the kubelet does), with the Pod's env (values, fieldRef,
//     resourceFieldRef, secretKeyRef, configMapKeyRef) and the image's PATH
//     and HOME, nothing of this process's environment;
//   - a container that exits is seen: with restartPolicy Always (or
//     OnFailure and a failure) it is recorded (Deaths) and restarted after
//     the kubelet's back-off (10 s, doubling, at most 5 min), with a fresh
//     /tmp, its restart count in the Pod's status; otherwise the Pod's phase
//     becomes Succeeded or Failed by its exit code, as the Job controller
//     reads it (and a failure is a death);
//   - when the Pod is deleted, every process of the Pod gets SIGTERM, then
//     SIGKILL when the grace runs out, and once they are gone the Pod is
//     removed (grace 0, its UID as precondition), as a kubelet does; the Pod
//     stays Terminating meanwhile. When the test ends the processes stop the
//     same way and the Pods are left to KWOK (removed at their grace's end).
//
// Output of each container: LOGS/pod-NAMESPACE-NAME.log; the Pod's /tmp (Ray's
// session logs) stays in WORK/pods/NAMESPACE-NAME-UID/tmp.
type RayPods struct {
	t       testing.TB
	c       *Cluster
	ns      string
	venv    string
	imgBin  string
	imgHome string
	kubelet Kubelet

	mu     sync.Mutex
	pods   map[string]*rayPod // by Pod UID
	deaths []Death
	errs   []string
	stop   chan struct{}
	done   chan struct{}
}

// Death is a Ray container that exited while its Pod was still there and
// meant to run (restartPolicy Always), or that failed.
type Death struct {
	Namespace, Pod, IP string
	Err                string // how it ended
	Log                string // the end of its output
	At                 time.Time
}

func (d Death) String() string {
	return fmt.Sprintf("%s/%s (%s) %s at %s; the end of its output:\n%s", d.Namespace, d.Pod, d.IP, d.Err,
		d.At.UTC().Format("15:04:05"), d.Log)
}

type rayPod struct {
	name, uid, ip string
	netns, hostIf string
	dir, log      string
	grace         time.Duration
	restart       corev1.RestartPolicy
	ctr           podContainer
	d             *daemon
	restarts      int
	stopping      bool
}

// podContainer is what runs, each time the container (re)starts.
type podContainer struct {
	name, shm, workDir string
	env, argv          []string
	readiness          *corev1.Probe // defaulted; nil: ready once started
	probePort          int
}

var podSeq struct {
	sync.Mutex
	n int
}

// Kubelet is what a kubelet is configured with that the Pods see: its
// --cluster-dns and --cluster-domain (zero: DNS_IP and CLUSTER_DOMAIN).
type Kubelet struct {
	ClusterDNS, ClusterDomain string
}

// ImageFile is a file of the Pods' image under /home/ray (its working
// directory), as a user's image built on rayproject/ray adds its code there.
type ImageFile struct {
	Name    string // relative to /home/ray
	Content string
}

// RunRayPods starts running the marked Pods of namespace NS until t ends, as
// a kubelet configured with k would, their image holding files.
func RunRayPods(t testing.TB, ns string, k Kubelet, files ...ImageFile) *RayPods {
	t.Helper()
	c := Attach(t)
	venv := c.Env["RAY_VENV"]
	if venv == "" {
		t.Fatalf("RunRayPods: cluster.env names no RAY_VENV (scripts/install-deps.sh --test installs Ray; scripts/e2e.sh passes E2E_RAY_VENV)")
	}
	if _, err := os.Stat(filepath.Join(venv, "bin", "ray")); err != nil {
		t.Fatalf("RunRayPods: RAY_VENV=%s has no bin/ray: %v (scripts/install-deps.sh --test installs it)", venv, err)
	}
	if strings.HasPrefix(venv, "/tmp/") || strings.HasPrefix(venv, "/home/") {
		t.Fatalf("RunRayPods: RAY_VENV=%s is under a folder each Pod gets its own of", venv)
	}
	if k.ClusterDNS == "" {
		k.ClusterDNS = c.DNSIP
	}
	if k.ClusterDomain == "" {
		k.ClusterDomain = c.ClusterDomain
	}
	rp := &RayPods{t: t, c: c, ns: ns, venv: venv, kubelet: k, pods: map[string]*rayPod{},
		stop: make(chan struct{}), done: make(chan struct{})}
	if err := rp.makeImage(files); err != nil {
		t.Fatalf("RunRayPods: %v", err)
	}
	if err := enablePodForwarding(c); err != nil {
		t.Fatalf("RunRayPods: %v", err)
	}
	t.Cleanup(rp.Stop)
	go rp.loop()
	return rp
}

// makeImage makes the Pods' "image": its /usr/local/bin, ray, python and
// serve of RAY_VENV (wrappers, so that Python finds its environment), and
// the files of its /home/ray.
func (rp *RayPods) makeImage(files []ImageFile) error {
	rp.imgBin = filepath.Join(rp.c.Work, "pods", "image-bin")
	if err := os.MkdirAll(rp.imgBin, 0o755); err != nil {
		return err
	}
	rp.imgHome = filepath.Join(rp.c.Work, "pods", "image-home-"+rp.ns)
	if err := os.MkdirAll(rp.imgHome, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		path := filepath.Join(rp.imgHome, filepath.Clean("/"+f.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(f.Content), 0o644); err != nil {
			return err
		}
	}
	for _, b := range []string{"ray", "python", "python3", "serve", "pip"} {
		script := fmt.Sprintf("#!/bin/sh\nexec %s \"$@\"\n", filepath.Join(rp.venv, "bin", b))
		if err := os.WriteFile(filepath.Join(rp.imgBin, b), []byte(script), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// Deaths are the containers that exited while their Pod was there.
func (rp *RayPods) Deaths() []Death {
	rp.mu.Lock()
	defer rp.mu.Unlock()
	return append([]Death(nil), rp.deaths...)
}

// Log is the output of Pod NAME's container so far ("" when it never ran).
func (rp *RayPods) Log(name string) string {
	rp.mu.Lock()
	var log string
	for _, p := range rp.pods {
		if p.name == name {
			log = p.log
		}
	}
	rp.mu.Unlock()
	if log == "" {
		return ""
	}
	b, _ := os.ReadFile(log)
	return string(b)
}

// Stop stops every container and removes the Pods' namespaces (t.Cleanup).
func (rp *RayPods) Stop() {
	select {
	case <-rp.stop:
		return
	default:
	}
	close(rp.stop)
	<-rp.done
	rp.mu.Lock()
	pods := make([]*rayPod, 0, len(rp.pods))
	for _, p := range rp.pods {
		pods = append(pods, p)
	}
	rp.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range pods {
		wg.Add(1)
		go func(p *rayPod) { defer wg.Done(); rp.kill(p, 5*time.Second) }(p)
	}
	wg.Wait()
	disablePodForwarding()
	for _, d := range rp.Deaths() {
		rp.t.Logf("RayPods: container of %s/%s exited while its Pod ran: %s", d.Namespace, d.Pod, d.Err)
	}
	for _, e := range rp.errs {
		rp.t.Logf("RayPods: %s", e)
	}
}

func (rp *RayPods) loop() {
	defer close(rp.done)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		rp.sync()
		select {
		case <-rp.stop:
			return
		case <-tick.C:
		}
	}
}

// sync starts the containers of marked Pods that run, and stops those of
// Pods that are gone or being deleted.
func (rp *RayPods) sync() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	list, err := rp.c.Kube.CoreV1().Pods(rp.ns).List(ctx, metav1.ListOptions{LabelSelector: RunLabel + "=" + RunLabelValue})
	if err != nil {
		return // the next tick tries again
	}
	listed := map[string]*corev1.Pod{}
	for i := range list.Items {
		listed[string(list.Items[i].UID)] = &list.Items[i]
	}
	rp.mu.Lock()
	type stopping struct {
		p      *rayPod
		grace  time.Duration
		remove bool
	}
	var stops []stopping
	for uid, p := range rp.pods {
		if p.stopping {
			continue
		}
		pod, ok := listed[uid]
		switch {
		case !ok:
			stops = append(stops, stopping{p, p.grace, false})
		case pod.DeletionTimestamp != nil:
			grace := min(p.grace, time.Until(pod.DeletionTimestamp.Time))
			stops = append(stops, stopping{p, max(grace, 0), true})
		case pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed:
			stops = append(stops, stopping{p, 0, false}) // its container is done; the sandbox goes
		default:
			continue
		}
		p.stopping = true
	}
	var fresh []*corev1.Pod
	for uid, pod := range listed {
		if _, ok := rp.pods[uid]; !ok && pod.DeletionTimestamp == nil && pod.Status.Phase == corev1.PodRunning && pod.Status.PodIP != "" {
			fresh = append(fresh, pod)
		}
	}
	rp.mu.Unlock()
	for _, s := range stops {
		go func() {
			rp.kill(s.p, s.grace)
			if s.remove {
				rp.removePod(s.p)
			}
		}()
	}
	for _, p := range fresh {
		rp.start(ctx, p)
	}
}

// removePod removes a deleted Pod whose processes are gone, as the kubelet
// does once its containers stopped: grace 0, and only that Pod (its UID).
func (rp *RayPods) removePod(p *rayPod) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	uid := types.UID(p.uid)
	err := rp.c.Kube.CoreV1().Pods(rp.ns).Delete(ctx, p.name, metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		rp.mu.Lock()
		rp.errs = append(rp.errs, fmt.Sprintf("removing Pod %s after its containers stopped: %v", p.name, err))
		rp.mu.Unlock()
	}
}

// start runs pod's Ray container; a Pod that cannot be started is recorded
// as a death with the reason, as a kubelet reports a failed start.
func (rp *RayPods) start(ctx context.Context, pod *corev1.Pod) {
	podSeq.Lock()
	podSeq.n++
	seq := podSeq.n
	podSeq.Unlock()
	p := &rayPod{name: pod.Name, uid: string(pod.UID), ip: pod.Status.PodIP,
		netns:   fmt.Sprintf("%s%d-%d", podNetnsPrefix, os.Getpid(), seq),
		hostIf:  fmt.Sprintf("rwp%dx%d", os.Getpid()%100000, seq),
		dir:     filepath.Join(rp.c.Work, "pods", fmt.Sprintf("%s-%s-%s", rp.ns, pod.Name, pod.UID[:8])),
		log:     filepath.Join(rp.c.Logs, fmt.Sprintf("pod-%s-%s.log", rp.ns, pod.Name)),
		grace:   30 * time.Second,
		restart: pod.Spec.RestartPolicy}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		p.grace = time.Duration(*g) * time.Second
	}
	rp.mu.Lock()
	rp.pods[p.uid] = p
	rp.mu.Unlock()
	fail := func(err error) {
		rp.mu.Lock()
		p.stopping = true
		rp.deaths = append(rp.deaths, Death{Namespace: rp.ns, Pod: p.name, IP: p.ip, Err: "not started: " + err.Error(), At: time.Now()})
		rp.mu.Unlock()
		removePodNetwork(p.netns, p.hostIf, p.ip)
	}
	if len(pod.Spec.Containers) == 0 {
		fail(fmt.Errorf("no container"))
		return
	}
	ctr := pod.Spec.Containers[0] // KubeRay's Ray container (utils.RayContainerIndex)
	env, err := rp.containerEnv(ctx, pod, ctr)
	if err != nil {
		fail(err)
		return
	}
	argv := append(expandAll(ctr.Command, env), expandAll(ctr.Args, env)...)
	if len(ctr.Command) == 0 {
		fail(fmt.Errorf("container %s has no command (the image's entrypoint is not known here)", ctr.Name))
		return
	}
	if err := makePodNetwork(p.netns, p.hostIf, p.ip, resolvConf(rp.kubelet, pod), etcHosts(pod)); err != nil {
		fail(err)
		return
	}
	p.ctr = podContainer{name: ctr.Name, shm: shmSize(pod, ctr), workDir: ctr.WorkingDir, env: env, argv: argv}
	if p.ctr.workDir == "" {
		p.ctr.workDir = "/home/ray"
	}
	if r := ctr.ReadinessProbe; r != nil {
		if r.HTTPGet == nil && r.Exec == nil {
			fail(fmt.Errorf("container %s's readinessProbe is neither httpGet nor exec, the kinds this runner probes", ctr.Name))
			return
		}
		p.ctr.readiness = r.DeepCopy()
		defaultProbe(p.ctr.readiness)
		if r.HTTPGet != nil {
			if p.ctr.probePort, err = containerPort(ctr, r.HTTPGet.Port); err != nil {
				fail(fmt.Errorf("container %s's readinessProbe: %v", ctr.Name, err))
				return
			}
		}
	}
	rp.mu.Lock()
	err = rp.run(p)
	rp.mu.Unlock()
	if err != nil {
		fail(err)
	}
}

// run starts p's container (again), with a /tmp of its own: a restarted
// container gets a fresh writable layer. Called with rp.mu held.
func (rp *RayPods) run(p *rayPod) error {
	tmp := filepath.Join(p.dir, fmt.Sprintf("tmp-%d", p.restarts))
	if err := os.MkdirAll(tmp, 0o1777); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o1777); err != nil {
		return err
	}
	// ip netns exec gives the command a mount namespace of its own (with
	// /etc/netns/NETNS/* bound over /etc); unshare adds the hostname's.
	// /tmp last: the other sources are under WORK, which may be in /tmp.
	setup := `set -e
mount --bind "$3" /usr/local/bin
mount -t tmpfs -o size="$2" shm /dev/shm
mount -t tmpfs -o mode=0755 home /home
mkdir -p /home/ray
cp -R "$6"/. /home/ray/
mount --bind "$1" /tmp
hostname "$4"
cd "$5"
shift 6
exec env -i "$@"`
	args := []string{"netns", "exec", p.netns, "unshare", "--uts", "--mount", "--propagation", "private", "--",
		"sh", "-c", setup, "sh", tmp, p.ctr.shm, rp.imgBin, p.name, p.ctr.workDir, rp.imgHome}
	args = append(args, p.ctr.env...)
	args = append(args, p.ctr.argv...)
	cmd := exec.Command("ip", args...)
	header := fmt.Sprintf("# %s: Pod %s/%s (%s), netns %s, start %d: %q\n", time.Now().UTC().Format(time.RFC3339), rp.ns, p.name, p.ip,
		p.netns, p.restarts+1, p.ctr.argv)
	d, err := launch("pod-"+p.name, p.log, cmd, false, header)
	if err != nil {
		return err
	}
	p.d = d
	started := time.Now()
	go func() {
		<-d.done
		rp.exited(p, d, started)
	}()
	go rp.probeReadiness(p, d)
	return nil
}

// probeReadiness reports the readiness of container run d in the Pod's
// status as the kubelet's prober does (prober.go): not ready at its start
// (KWOK's pod-running-not-ready stage, or the restart), then its
// readinessProbe (httpGet from this host to the Pod's IP, or exec in the
// container), a change counted once it repeats its threshold; without a
// probe, ready once started.
func (rp *RayPods) probeReadiness(p *rayPod, d *daemon) {
	spec := p.ctr.readiness
	if spec == nil {
		rp.setReady(p, d, true)
		return
	}
	pr := &prober{name: p.name, host: p.ip, port: p.ctr.probePort, userAgent: rp.c.probeAgent()}
	ready, lastOK, run := false, false, 0
	next := time.Now().Add(time.Duration(spec.InitialDelaySeconds) * time.Second)
	for {
		select {
		case <-d.done:
			return
		case <-rp.stop:
			return
		case <-time.After(time.Until(next)):
		}
		next = time.Now().Add(time.Duration(spec.PeriodSeconds) * time.Second)
		var ok bool
		if spec.Exec != nil {
			ok = rp.execProbe(p, d, spec)
		} else {
			ok, _ = pr.probeOnce(spec)
		}
		if ok == lastOK && run > 0 {
			run++
		} else {
			lastOK, run = ok, 1
		}
		if ok != ready && ((ok && run >= int(spec.SuccessThreshold)) || (!ok && run >= int(spec.FailureThreshold))) {
			ready = ok
			rp.setReady(p, d, ready)
		}
	}
}

// execProbe runs an exec probe's command in the container's namespaces
// (network, mount, host name: those of its first process) with its
// environment, as the kubelet's exec probe does; exit 0 within timeoutSeconds
// is success.
func (rp *RayPods) execProbe(p *rayPod, d *daemon, spec *corev1.Probe) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(spec.TimeoutSeconds)*time.Second)
	defer cancel()
	args := []string{"-t", strconv.Itoa(d.cmd.Process.Pid), "-n", "-m", "-u", "--", "env", "-i"}
	args = append(append(args, p.ctr.env...), spec.Exec.Command...)
	return exec.CommandContext(ctx, "nsenter", args...).Run() == nil
}

// setReady writes the readiness of container run d, while it is p's current
// run: the container's ready and the Pod's Ready and ContainersReady (the
// containers this runner does not run count as ready, as KWOK has them).
func (rp *RayPods) setReady(p *rayPod, d *daemon, ready bool) {
	rp.mu.Lock()
	current := p.d == d && !p.stopping
	rp.mu.Unlock()
	if !current {
		return
	}
	rp.writeStatus(p, func(s *corev1.PodStatus) {
		for i := range s.ContainerStatuses {
			cs := &s.ContainerStatuses[i]
			cs.Ready = ready || cs.Name != p.ctr.name
			if cs.Name == p.ctr.name {
				cs.Started = ptr.To(true)
			}
		}
		setPodReady(s, ready)
	})
}

// setPodReady sets the Pod's Ready and ContainersReady conditions.
func setPodReady(s *corev1.PodStatus, ready bool) {
	status := corev1.ConditionFalse
	if ready {
		status = corev1.ConditionTrue
	}
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if (c.Type == corev1.PodReady || c.Type == corev1.ContainersReady) && c.Status != status {
			c.Status, c.LastTransitionTime, c.Reason = status, metav1.Now(), ""
			if !ready {
				c.Reason = "ContainersNotReady"
			}
		}
	}
}

// exited is what follows the end of p's container d, as the kubelet's
// restart policy has it.
func (rp *RayPods) exited(p *rayPod, d *daemon, started time.Time) {
	code := -1
	if d.cmd.ProcessState != nil {
		code = d.cmd.ProcessState.ExitCode()
	}
	rp.mu.Lock()
	if p.stopping {
		rp.mu.Unlock()
		return
	}
	restart := p.restart == corev1.RestartPolicyAlways || p.restart == "" || (p.restart == corev1.RestartPolicyOnFailure && code != 0)
	if restart || code != 0 {
		reason := fmt.Sprintf("exited with status %d", code)
		if d.err != nil && code < 0 {
			reason = d.err.Error()
		}
		b, _ := os.ReadFile(p.log)
		rp.deaths = append(rp.deaths, Death{Namespace: rp.ns, Pod: p.name, IP: p.ip, Err: reason, Log: lastLines(string(b), 15), At: time.Now()})
	}
	if restart {
		p.restarts++
	}
	restarts := p.restarts
	rp.mu.Unlock()
	terminated := &corev1.ContainerStateTerminated{ExitCode: int32(code), Reason: "Completed",
		StartedAt: metav1.NewTime(started), FinishedAt: metav1.Now()}
	if code != 0 {
		terminated.Reason = "Error"
	}
	rp.writeStatus(p, func(s *corev1.PodStatus) {
		for i := range s.ContainerStatuses {
			cs := &s.ContainerStatuses[i]
			if cs.Name != p.ctr.name {
				continue
			}
			if restart {
				cs.RestartCount = int32(restarts)
				cs.LastTerminationState = corev1.ContainerState{Terminated: terminated}
				cs.Ready = false
				continue
			}
			cs.Ready, cs.Started = false, ptr.To(false)
			cs.State = corev1.ContainerState{Terminated: terminated}
		}
		setPodReady(s, false)
		if !restart {
			s.Phase = corev1.PodSucceeded
			if code != 0 {
				s.Phase = corev1.PodFailed
			}
		}
	})
	if !restart {
		return
	}
	backoff := min(10*time.Second<<min(restarts-1, 5), 5*time.Minute)
	time.AfterFunc(backoff, func() {
		rp.mu.Lock()
		defer rp.mu.Unlock()
		if p.stopping {
			return
		}
		if err := rp.run(p); err != nil {
			rp.deaths = append(rp.deaths, Death{Namespace: rp.ns, Pod: p.name, IP: p.ip, Err: "not restarted: " + err.Error(), At: time.Now()})
		}
	})
}

// writeStatus changes pod p's status as its kubelet reports it.
func (rp *RayPods) writeStatus(p *rayPod, change func(*corev1.PodStatus)) {
	pods := rp.c.Kube.CoreV1().Pods(rp.ns)
	var last error
	for attempt := 0; attempt < 10; attempt++ {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		pod, err := pods.Get(ctx, p.name, metav1.GetOptions{})
		if err == nil && string(pod.UID) != p.uid {
			cancel()
			return
		}
		if err == nil {
			change(&pod.Status)
			_, err = pods.UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		}
		cancel()
		if err == nil || apierrors.IsNotFound(err) {
			return
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	rp.mu.Lock()
	rp.errs = append(rp.errs, fmt.Sprintf("writing Pod %s's status: %v", p.name, last))
	rp.mu.Unlock()
}

// kill stops every process of pod p (SIGTERM, SIGKILL after grace, as a
// container runtime stops a container) and removes its network.
func (rp *RayPods) kill(p *rayPod, grace time.Duration) {
	rp.mu.Lock()
	p.stopping = true
	d := p.d
	rp.mu.Unlock()
	signalNetns(p.netns, syscall.SIGTERM)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) && len(netnsPids(p.netns)) > 0 {
		time.Sleep(200 * time.Millisecond)
	}
	for i := 0; i < 50 && len(netnsPids(p.netns)) > 0; i++ {
		signalNetns(p.netns, syscall.SIGKILL)
		time.Sleep(100 * time.Millisecond)
	}
	if d != nil {
		<-d.done
	}
	removePodNetwork(p.netns, p.hostIf, p.ip)
}

// containerEnv is the container's environment as the kubelet makes it (the
// image's PATH and HOME first, then envFrom, then env in order, $(VAR)
// expanded against what came before), as KEY=VALUE.
func (rp *RayPods) containerEnv(ctx context.Context, pod *corev1.Pod, ctr corev1.Container) ([]string, error) {
	var keys []string
	vals := map[string]string{}
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			keys = append(keys, k)
		}
		vals[k] = v
	}
	set("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	set("HOME", "/home/ray")
	set("HOSTNAME", pod.Name)
	// The closed network: Ray's usage report would look up a host outside the cluster.
	set("RAY_USAGE_STATS_ENABLED", "0")
	kube := rp.c.Kube.CoreV1()
	for _, from := range ctr.EnvFrom {
		switch {
		case from.ConfigMapRef != nil:
			cm, err := kube.ConfigMaps(pod.Namespace).Get(ctx, from.ConfigMapRef.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("envFrom configMap %s: %v", from.ConfigMapRef.Name, err)
			}
			for k, v := range cm.Data {
				set(from.Prefix+k, v)
			}
		case from.SecretRef != nil:
			s, err := kube.Secrets(pod.Namespace).Get(ctx, from.SecretRef.Name, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("envFrom secret %s: %v", from.SecretRef.Name, err)
			}
			for k, v := range s.Data {
				set(from.Prefix+k, string(v))
			}
		}
	}
	lookup := func(k string) (string, bool) { v, ok := vals[k]; return v, ok }
	for _, e := range ctr.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, lookup))
			continue
		}
		v, err := rp.envSource(ctx, pod, ctr, e.ValueFrom)
		if err != nil {
			return nil, fmt.Errorf("env %s: %v", e.Name, err)
		}
		set(e.Name, v)
	}
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, k+"="+vals[k])
	}
	return out, nil
}

func (rp *RayPods) envSource(ctx context.Context, pod *corev1.Pod, ctr corev1.Container, src *corev1.EnvVarSource) (string, error) {
	switch {
	case src.FieldRef != nil:
		return fieldValue(pod, src.FieldRef.FieldPath)
	case src.ResourceFieldRef != nil:
		return resourceValue(ctr, src.ResourceFieldRef)
	case src.SecretKeyRef != nil:
		s, err := rp.c.Kube.CoreV1().Secrets(pod.Namespace).Get(ctx, src.SecretKeyRef.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		v, ok := s.Data[src.SecretKeyRef.Key]
		if !ok {
			return "", fmt.Errorf("secret %s has no key %s", src.SecretKeyRef.Name, src.SecretKeyRef.Key)
		}
		return string(v), nil
	case src.ConfigMapKeyRef != nil:
		cm, err := rp.c.Kube.CoreV1().ConfigMaps(pod.Namespace).Get(ctx, src.ConfigMapKeyRef.Name, metav1.GetOptions{})
		if err != nil {
			return "", err
		}
		v, ok := cm.Data[src.ConfigMapKeyRef.Key]
		if !ok {
			return "", fmt.Errorf("configMap %s has no key %s", src.ConfigMapKeyRef.Name, src.ConfigMapKeyRef.Key)
		}
		return v, nil
	}
	return "", fmt.Errorf("a source this runner does not know")
}
