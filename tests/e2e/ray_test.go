package e2e

// Helpers the scenario files share: Ray Pods as KubeRay labels them, and the
// state a check waits for.

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"ray-webhook/tests/e2e/framework"
)

const (
	releaseLegacy  = "kuberay-v0.3.0" // bare service names; ray-webhook adds the FQDN
	releaseCurrent = "kuberay-v1.6.2" // writes FQ_RAY_IP itself; headless head Service
)

// rayPods are the stored Pods of RayCluster CLUSTER of one node type (head or worker).
func rayPods(t testing.TB, ns, cluster, nodeType string) []corev1.Pod {
	t.Helper()
	c := framework.Attach(t)
	list, err := c.Kube.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{
		LabelSelector: "ray.io/cluster=" + cluster + ",ray.io/node-type=" + nodeType})
	if err != nil {
		t.Fatalf("listing the %s Pods of %s/%s: %v", nodeType, ns, cluster, err)
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items
}

// live: not being deleted and not finished, the Pods ray-webhook counts as heads.
func live(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// envValues are the values of every env entry NAME of container c (more than one: a duplicate).
func envValues(c corev1.Container, name string) []string {
	var v []string
	for _, e := range c.Env {
		if e.Name == name {
			v = append(v, e.Value)
		}
	}
	return v
}

// oneEnv is the single value of env NAME of c, or fails t.
func oneEnv(t testing.TB, p *corev1.Pod, c corev1.Container, name string) string {
	t.Helper()
	v := envValues(c, name)
	if len(v) != 1 {
		t.Fatalf("Pod %s/%s container %s has %d env %s entries %q, want exactly 1", p.Namespace, p.Name, c.Name, len(v), name, v)
	}
	return v[0]
}

// duplicateEnv lists "container: NAME" for every env name that occurs twice in
// one container or init container of p.
func duplicateEnv(p *corev1.Pod) []string {
	var dup []string
	for _, c := range append(append([]corev1.Container{}, p.Spec.InitContainers...), p.Spec.Containers...) {
		seen := map[string]int{}
		for _, e := range c.Env {
			seen[e.Name]++
			if seen[e.Name] == 2 {
				dup = append(dup, c.Name+": "+e.Name)
			}
		}
	}
	return dup
}

// rayCluster is a RayCluster whose head runs.
type rayCluster struct {
	NS, Name string
	Head     corev1.Pod
	Workers  []corev1.Pod
	Service  *corev1.Service // <name>-head-svc
}

// headService is KubeRay's name for the head Service of RayCluster NAME.
func headService(name string) string { return name + "-head-svc" }

// waitRunning waits until RayCluster NS/NAME has exactly one live head that
// is Running and Ready with a Pod IP, at least WORKERS stored workers, and its
// head Service.
func waitRunning(t testing.TB, ns, name string, workers int, timeout time.Duration) rayCluster {
	t.Helper()
	c := framework.Attach(t)
	rc := rayCluster{NS: ns, Name: name}
	framework.Eventually(t, timeout, 500*time.Millisecond, func() (bool, string) {
		var liveHeads []corev1.Pod
		for _, p := range rayPods(t, ns, name, "head") {
			if live(&p) {
				liveHeads = append(liveHeads, p)
			}
		}
		if len(liveHeads) != 1 {
			return false, fmt.Sprintf("%d live head Pods of %s/%s", len(liveHeads), ns, name)
		}
		h := liveHeads[0]
		if h.Status.Phase != corev1.PodRunning || !podReady(&h) || h.Status.PodIP == "" {
			return false, fmt.Sprintf("head %s/%s: phase %s, ready %v, node %q, IP %q", ns, h.Name, h.Status.Phase,
				podReady(&h), h.Spec.NodeName, h.Status.PodIP)
		}
		ws := rayPods(t, ns, name, "worker")
		if len(ws) < workers {
			return false, fmt.Sprintf("head %s Running at %s; %d of %d workers stored", h.Name, h.Status.PodIP, len(ws), workers)
		}
		svc, err := c.Kube.CoreV1().Services(ns).Get(context.Background(), headService(name), metav1.GetOptions{})
		if err != nil {
			return false, fmt.Sprintf("head Service: %v", err)
		}
		rc.Head, rc.Workers, rc.Service = h, ws, svc
		return true, ""
	})
	return rc
}

// createCluster creates RayCluster NAME in NS from a testdata fixture.
func createCluster(t testing.TB, ns, fixture, name string, vars map[string]string) {
	t.Helper()
	all := map[string]string{"NAME": name}
	for k, v := range vars {
		all[k] = v
	}
	framework.Create(t, ns, framework.Manifest(t, fixture, all))
}

// searchConf is a resolv.conf naming nameserver ip, with a search list that
// names namespace first, then second (and svc.DOMAIN, DOMAIN), as a Pod of
// namespace first would get it, but for two namespaces.
func searchConf(ip, domain string, namespaces ...string) string {
	var search []string
	for _, ns := range namespaces {
		search = append(search, ns+".svc."+domain)
	}
	search = append(search, "svc."+domain, domain)
	return fmt.Sprintf("nameserver %s\nsearch %s\n", ip, strings.Join(search, " "))
}

// onlyNameserver is a resolv.conf of one nameserver and no search list.
func onlyNameserver(ip string) string {
	return fmt.Sprintf("nameserver %s\n", ip)
}

// headPoll is one listing of the live heads (not being deleted, not
// Failed or Succeeded): cluster -> head names.
type headPoll struct {
	at    time.Time
	heads map[string][]string
}

// headPoller lists the live heads of NS every 0.5 s until stopped.
type headPoller struct {
	mu    sync.Mutex
	polls []headPoll
	stop  chan struct{}
	done  chan struct{}
}

func pollLiveHeads(t testing.TB, ns string, interval time.Duration) *headPoller {
	c := framework.Attach(t)
	p := &headPoller{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			list, err := c.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "ray.io/node-type=head"})
			cancel()
			if err == nil {
				poll := headPoll{at: time.Now(), heads: map[string][]string{}}
				for i := range list.Items {
					if live(&list.Items[i]) {
						cl := list.Items[i].Labels["ray.io/cluster"]
						poll.heads[cl] = append(poll.heads[cl], list.Items[i].Name)
					}
				}
				p.mu.Lock()
				p.polls = append(p.polls, poll)
				p.mu.Unlock()
			}
			select {
			case <-p.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(p.Stop)
	return p
}

func (p *headPoller) Stop() {
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}

// seen is every head of cluster C listed at some poll, sorted.
func (p *headPoller) seen(cluster string) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	set := map[string]bool{}
	for _, poll := range p.polls {
		for _, h := range poll.heads[cluster] {
			set[h] = true
		}
	}
	return sortedKeys(set)
}

func sortedKeys(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// twoLive describes every poll at which one cluster had more than one live head.
func (p *headPoller) twoLive() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, poll := range p.polls {
		for cl, hs := range poll.heads {
			if len(hs) > 1 {
				out = append(out, fmt.Sprintf("%s %s: %v", poll.at.Format("15:04:05.000"), cl, hs))
			}
		}
	}
	return out
}

// count is the number of polls so far.
func (p *headPoller) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.polls)
}

// kubeRayHeadName is the head name KubeRay v1.6.2 itself gives cluster C
// (utils.PodName): its first 50 characters, lower case, plus -head.
func kubeRayHeadName(c string) string {
	if len(c) > 50 {
		c = c[:50]
	}
	return strings.ToLower(c) + "-head"
}

var rayServicesV1 = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayservices"}
