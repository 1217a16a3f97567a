package framework

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
//   - a container that exits while its Pod is there is recorded (Deaths) and
//     not restarted; when the Pod is deleted or the test ends, every process
//     of the Pod gets SIGTERM, then SIGKILL after the grace, and the
//     namespace goes.
//
// Output of each container: LOGS/pod-NAMESPACE-NAME.log; the Pod's /tmp (Ray's
// session logs) stays in WORK/pods/NAMESPACE-NAME-UID/tmp.
type RayPods struct {
	t       testing.TB
	c       *Cluster
	ns      string
	venv    string
	imgBin  string
	kubelet Kubelet

	mu     sync.Mutex
	pods   map[string]*rayPod // by Pod UID
	deaths []Death
	errs   []string
	stop   chan struct{}
	done   chan struct{}
}

// Death is a Ray container that exited while its Pod was still there.
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
	name, uid, ip   string
	netns, hostIf   string
	dir, log        string
	grace           time.Duration
	d               *daemon
	stopping        bool
	started, exited time.Time
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

// RunRayPods starts running the marked Pods of namespace NS until t ends, as
// a kubelet configured with k would.
func RunRayPods(t testing.TB, ns string, k Kubelet) *RayPods {
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
	if err := rp.makeImageBin(); err != nil {
		t.Fatalf("RunRayPods: %v", err)
	}
	if err := enablePodForwarding(c); err != nil {
		t.Fatalf("RunRayPods: %v", err)
	}
	t.Cleanup(rp.Stop)
	go rp.loop()
	return rp
}

// makeImageBin is the /usr/local/bin of the Pods' "image": ray, python and
// serve of RAY_VENV (wrappers, so that Python finds its environment).
func (rp *RayPods) makeImageBin() error {
	rp.imgBin = filepath.Join(rp.c.Work, "pods", "image-bin")
	if err := os.MkdirAll(rp.imgBin, 0o755); err != nil {
		return err
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
	wanted := map[string]*corev1.Pod{}
	for i := range list.Items {
		p := &list.Items[i]
		if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" {
			wanted[string(p.UID)] = p
		}
	}
	rp.mu.Lock()
	var gone []*rayPod
	for uid, p := range rp.pods {
		if _, ok := wanted[uid]; !ok && !p.stopping {
			p.stopping = true
			gone = append(gone, p)
		}
	}
	var fresh []*corev1.Pod
	for uid, p := range wanted {
		if _, ok := rp.pods[uid]; !ok {
			fresh = append(fresh, p)
		}
	}
	rp.mu.Unlock()
	for _, p := range gone {
		go rp.kill(p, p.grace)
	}
	for _, p := range fresh {
		rp.start(ctx, p)
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
		netns:  fmt.Sprintf("%s%d-%d", podNetnsPrefix, os.Getpid(), seq),
		hostIf: fmt.Sprintf("rwp%dx%d", os.Getpid()%100000, seq),
		dir:    filepath.Join(rp.c.Work, "pods", fmt.Sprintf("%s-%s-%s", rp.ns, pod.Name, pod.UID[:8])),
		log:    filepath.Join(rp.c.Logs, fmt.Sprintf("pod-%s-%s.log", rp.ns, pod.Name)),
		grace:  30 * time.Second}
	if g := pod.Spec.TerminationGracePeriodSeconds; g != nil {
		p.grace = time.Duration(*g) * time.Second
	}
	rp.mu.Lock()
	rp.pods[p.uid] = p
	rp.mu.Unlock()
	fail := func(err error) {
		rp.mu.Lock()
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
	for _, d := range []string{"tmp", "home"} {
		if err := os.MkdirAll(filepath.Join(p.dir, d), 0o1777); err != nil {
			fail(err)
			return
		}
	}
	workDir := ctr.WorkingDir
	if workDir == "" {
		workDir = "/home/ray"
	}
	// ip netns exec gives the command a mount namespace of its own (with
	// /etc/netns/NETNS/* bound over /etc); unshare adds the hostname's.
	// /tmp last: the other sources are under WORK, which may be in /tmp.
	setup := `set -e
mount --bind "$3" /usr/local/bin
mount -t tmpfs -o size="$2" shm /dev/shm
mount -t tmpfs -o mode=0755 home /home
mkdir -p /home/ray
mount --bind "$1" /tmp
hostname "$4"
cd "$5"
shift 5
exec env -i "$@"`
	args := []string{"netns", "exec", p.netns, "unshare", "--uts", "--mount", "--propagation", "private", "--",
		"sh", "-c", setup, "sh", filepath.Join(p.dir, "tmp"), shmSize(pod, ctr), rp.imgBin, pod.Name, workDir}
	args = append(args, env...)
	args = append(args, argv...)
	cmd := exec.Command("ip", args...)
	header := fmt.Sprintf("# %s: Pod %s/%s (%s), netns %s: %q\n", time.Now().UTC().Format(time.RFC3339), rp.ns, pod.Name, p.ip, p.netns, argv)
	d, err := launch("pod-"+pod.Name, p.log, cmd, false, header)
	if err != nil {
		fail(err)
		return
	}
	rp.mu.Lock()
	p.d, p.started = d, time.Now()
	rp.mu.Unlock()
	go func() {
		<-d.done
		rp.mu.Lock()
		defer rp.mu.Unlock()
		p.exited = time.Now()
		if !p.stopping {
			reason := "exited with status 0"
			if d.err != nil {
				reason = d.err.Error()
			}
			b, _ := os.ReadFile(p.log)
			rp.deaths = append(rp.deaths, Death{Namespace: rp.ns, Pod: p.name, IP: p.ip, Err: reason, Log: lastLines(string(b), 15), At: p.exited})
		}
	}()
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
