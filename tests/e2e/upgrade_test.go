package e2e

// TestRayServiceUpgrade (old check 22c): a RayService whose name has 40
// characters is upgraded to completion by a real KubeRay operator on the
// cluster's real parts, with Ray and Serve themselves in its Pods
// (framework.RunRayPods; the application testdata/serve-app/echo_app.py in
// the image's /home/ray). One
// subtest per operator release: kuberay-v1.6.2 (its clusters
// <service>-<5 random>, 46 characters: heads <cluster>-head), and with
// E2E_ALL_RELEASES=1 kuberay-v1.3.2 (<service>-raycluster-<5 random>, 57
// characters, whose first 50, and so KubeRay's own head names, are the same
// for the old and the new cluster).
//
// (1) the first cluster active and serving (Ready, nothing pending, the serve
// Service selecting it); (2) spec.rayClusterConfig changed: a new pending
// cluster; (3) the new cluster active and serving; (4) the operator deletes
// the old RayCluster. From before the RayService is created to the end, the
// live heads of the namespace are listed every 0.5 s. Checked: never two live
// heads of one cluster; every head seen has the name ray-webhook's rule gives
// (docs/rules.md, "One head per RayCluster"); the heads of the operator's
// CreatedHeadPod events are exactly the stored ones, no FailedCreateHeadPod,
// no "already exists" in its log; both clusters owned by the RayService; the
// serve Service's answer (GET / through kube-proxy, from the test host) comes
// from the active cluster's Echo replica, before and after the switch; at the
// end the new head is what its head Service's name and the RayService's reach
// through CoreDNS (its node table's head is that Pod).

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"ray-webhook/tests/e2e/framework"
)

const upgradeService = "rayservice-upgraded-to-completion-40char" // 40 characters

func TestRayServiceUpgrade(t *testing.T) {
	// In parallel (docs/end-to-end.md, "Tests in parallel"), with tests that
	// create no Ray Pod, start no operator and leave the webhook's routing
	// alone: its count of kube-apiserver's calls of the Pod webhook is
	// cluster-wide, and its operator watches every namespace.
	t.Parallel()
	framework.Attach(t)
	releases := []string{releaseCurrent}
	// v1.3.2's cold build is long: tests/e2e/kuberay-v1.3.2/OPTIONAL.
	if os.Getenv("E2E_ALL_RELEASES") == "1" {
		releases = append(releases, "kuberay-v1.3.2")
	}
	for _, r := range releases {
		t.Run(r, func(t *testing.T) { testUpgradeToCompletion(t, r) })
	}
}

// upgradeHeadName is the head name ray-webhook's rule gives cluster C
// (docs/rules.md, "One head per RayCluster"): lowercased, plus -head, up to 50
// characters; a longer one: its first 49 (less a trailing - or .), -, the low
// 32 bits of its 64-bit FNV-1a in hex, -head. Written from that page.
func upgradeHeadName(c string) string {
	c = strings.ToLower(c)
	if len(c) <= 50 {
		return c + "-head"
	}
	h := fnv.New64a()
	h.Write([]byte(c))
	p := strings.TrimRight(c[:49], "-.")
	return fmt.Sprintf("%s-%08x-head", p, h.Sum64()&0xffffffff)
}

// upgradeState is the RayService's active and pending cluster and its Ready condition.
func upgradeState(t *testing.T, ns string) (active, pending, ready string) {
	t.Helper()
	c := framework.Attach(t)
	rs, err := c.Dynamic.Resource(rayServicesV1).Namespace(ns).Get(context.Background(), upgradeService, metav1.GetOptions{})
	if err != nil {
		return "", "", "get: " + err.Error()
	}
	active, _, _ = unstructured.NestedString(rs.Object, "status", "activeServiceStatus", "rayClusterName")
	pending, _, _ = unstructured.NestedString(rs.Object, "status", "pendingServiceStatus", "rayClusterName")
	conds, _, _ := unstructured.NestedSlice(rs.Object, "status", "conditions")
	for _, x := range conds {
		if m, ok := x.(map[string]any); ok && m["type"] == "Ready" {
			ready, _ = m["status"].(string)
		}
	}
	return active, pending, ready
}

// upgradeServing: CLUSTER is active, nothing pending, Ready, and the serve Service selects it.
func upgradeServing(t *testing.T, ns, cluster string) (bool, string) {
	c := framework.Attach(t)
	active, pending, ready := upgradeState(t, ns)
	state := fmt.Sprintf("active %q, pending %q, Ready %q", active, pending, ready)
	if active != cluster || pending != "" || ready != "True" {
		return false, state
	}
	svc, err := c.Kube.CoreV1().Services(ns).Get(context.Background(), upgradeService+"-serve-svc", metav1.GetOptions{})
	if err != nil {
		return false, state + "; serve Service: " + err.Error()
	}
	if got := svc.Spec.Selector["ray.io/cluster"]; got != cluster {
		return false, state + "; serve Service selects " + got
	}
	return true, state
}

func testUpgradeToCompletion(t *testing.T, release string) {
	c := framework.Attach(t)
	ctx := context.Background()
	ns := framework.NewNamespace(t, "e2e-upgrade")
	if strings.HasPrefix(c.KubeProxy, "none") {
		t.Fatalf("the serve Service is a ClusterIP one, and this cluster runs no kube-proxy: %s", c.KubeProxy)
	}
	app, err := os.ReadFile("testdata/serve-app/echo_app.py")
	if err != nil {
		t.Fatal(err)
	}
	rp := framework.RunRayPods(t, ns, framework.Kubelet{}, framework.ImageFile{Name: "echo_app.py", Content: string(app)})
	op := framework.Operator(t, release)
	heads := pollLiveHeads(t, ns, 500*time.Millisecond)
	calls0 := apiserverReading(t)
	t0 := time.Now()
	framework.Create(t, ns, framework.Manifest(t, "testdata/rayservice-upgrade-v1.yaml", map[string]string{"NAME": upgradeService}))

	// (1) The first cluster active and serving: head scheduled (KWOK) and
	// ready (its readinessProbe), the Serve application RUNNING on its
	// dashboard, serve Service endpoints (the EndpointSlice controller).
	var c1 string
	framework.Eventually(t, 240*time.Second, time.Second, func() (bool, string) {
		failOnDeath(t, rp)
		c1, _, _ = upgradeState(t, ns)
		if c1 == "" {
			return false, "no active cluster yet"
		}
		return upgradeServing(t, ns, c1)
	})
	tReady := time.Since(t0)
	served1 := serveAnswer(t, ns, c1)
	rc1, err := c.Dynamic.Resource(rayClustersV1).Namespace(ns).Get(ctx, c1, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("RayCluster %s: %v", c1, err)
	}
	if len(c1) > 63 {
		t.Errorf("cluster name %s has %d characters", c1, len(c1))
	}

	// (2) The upgrade: a head rayStartParams entry changes the cluster hash.
	patch := `{"spec":{"rayClusterConfig":{"headGroupSpec":{"rayStartParams":{"num-cpus":"0"}}}}}`
	if _, err := c.Dynamic.Resource(rayServicesV1).Namespace(ns).Patch(ctx, upgradeService, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("changing spec.rayClusterConfig: %v", err)
	}
	var c2 string
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, func() (bool, string) {
		a, p, r := upgradeState(t, ns)
		c2 = p
		return p != "" && p != c1, fmt.Sprintf("active %q, pending %q, Ready %q", a, p, r)
	})
	// (3) The new cluster active and serving; (4) the old RayCluster deleted
	// (60 s after the switch: RayClusterDeletionDelayDuration), its Pods
	// then by the garbage collector.
	framework.Eventually(t, 240*time.Second, time.Second, func() (bool, string) {
		failOnDeath(t, rp)
		return upgradeServing(t, ns, c2)
	})
	tSwitched := time.Since(t0)
	served2 := serveAnswer(t, ns, c2)
	framework.Eventually(t, 90*time.Second, 500*time.Millisecond, func() (bool, string) {
		_, err := c.Dynamic.Resource(rayClustersV1).Namespace(ns).Get(ctx, c1, metav1.GetOptions{})
		return err != nil && strings.Contains(err.Error(), "not found"), fmt.Sprintf("RayCluster %s: %v", c1, err)
	})
	tDeleted := time.Since(t0)
	time.Sleep(2 * time.Second)
	heads.Stop()
	rc2, err := c.Dynamic.Resource(rayClustersV1).Namespace(ns).Get(ctx, c2, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("RayCluster %s: %v", c2, err)
	}

	// Every head the operator created was stored (its events; stored: listed
	// at a poll or stored now, since the old cluster's go), none refused.
	time.Sleep(time.Second)
	events, err := c.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("events: %v", err)
	}
	created := map[string]bool{}
	for _, e := range events.Items {
		switch e.Reason {
		case "CreatedHeadPod":
			name := e.Message
			if i := strings.LastIndex(name, "/"); i >= 0 {
				name = name[i+1:]
			}
			created[name] = true
		case "FailedToCreateHeadPod", "FailedCreateHeadPod":
			t.Errorf("head creation refused: %s", e.Message)
		}
	}
	stored := map[string]bool{}
	heads.mu.Lock()
	for _, poll := range heads.polls {
		for cl, hs := range poll.heads {
			for _, h := range hs {
				stored[h] = true
			}
			if len(hs) > 1 {
				t.Errorf("%s: two live heads of %s: %v", poll.at.Format("15:04:05.000"), cl, hs)
			}
			for _, h := range hs {
				if h != upgradeHeadName(cl) {
					t.Errorf("head %s of %s is not named by ray-webhook's rule (%s)", h, cl, upgradeHeadName(cl))
				}
			}
		}
	}
	nPolls := len(heads.polls)
	heads.mu.Unlock()
	for _, p := range rayPods(t, ns, c2, "head") {
		stored[p.Name] = true
	}
	if nPolls == 0 {
		t.Errorf("the heads were never listed")
	}
	if got, want := strings.Join(sortedKeys(created), " "), strings.Join(sortedKeys(stored), " "); got != want {
		t.Errorf("heads created (events) [%s], stored [%s]", got, want)
	}
	already := regexp.MustCompile(`pods \\?"[^"\\]*\\?" already exists`)
	n := 0
	for _, line := range framework.Lines(op.Process.Log, upgradeService[:30]) {
		if already.MatchString(line) {
			n++
		}
	}
	if n != 0 {
		t.Errorf("the operator logged %d 'already exists' errors for %s's Pods", n, upgradeService)
	}
	// Counted: no Ray Pod refused or failed open while the clusters came and
	// went (the old one's Pods Terminating while Ray stops).
	calls := podCallsSince(t, calls0, apiserverReading(t))
	if calls.Rejected != 0 || calls.FailedOpen != 0 || calls.Calls < 4 {
		t.Errorf("during the upgrade kube-apiserver counted for %s %v; want at least the 4 Pods' calls, 0 rejected, 0 failed open", podWebhook, calls)
	}

	// One head per cluster, named by the rule; owned by the RayService.
	for _, rc := range []*unstructured.Unstructured{rc1, rc2} {
		cl := rc.GetName()
		if seen := strings.Join(heads.seen(cl), ","); seen != upgradeHeadName(cl) {
			t.Errorf("cluster %s: heads seen [%s], want [%s]", cl, seen, upgradeHeadName(cl))
		}
		if refs := rc.GetOwnerReferences(); len(refs) == 0 || refs[0].Kind != "RayService" {
			t.Errorf("RayCluster %s is not owned by the RayService: %v", cl, refs)
		}
	}

	// At the end the new cluster has its one head, which both its head
	// Service's name and the RayService's reach through CoreDNS.
	var end []string
	for _, p := range rayPods(t, ns, c2, "head") {
		end = append(end, p.Name)
	}
	if strings.Join(end, ",") != upgradeHeadName(c2) {
		t.Fatalf("cluster %s at the end: heads %v, want %s", c2, end, upgradeHeadName(c2))
	}
	svc2, _, _ := unstructured.NestedString(rc2.Object, "status", "head", "serviceName")
	head2 := rayPods(t, ns, c2, "head")[0]
	for _, svc := range []string{svc2, upgradeService + "-head-svc"} {
		fqdn := fmt.Sprintf("%s.%s.svc.%s", svc, ns, c.ClusterDomain)
		ip := resolveInTestHost(t, c, fqdn)
		var headIP string
		for _, n := range mustTable(t, ip) {
			if n.IsHead && n.State == "ALIVE" {
				headIP = n.NodeIP
			}
		}
		if ip != head2.Status.PodIP || headIP != head2.Status.PodIP {
			t.Errorf("through CoreDNS %s is %s, whose node table's head is %s; want the new head %s at %s", fqdn, ip, headIP, head2.Name, head2.Status.PodIP)
		}
	}
	t.Logf("old cluster %s (%d characters): head %s (KubeRay would name it %s)", c1, len(c1), upgradeHeadName(c1), kubeRayHeadName(c1))
	t.Logf("new cluster %s: head %s (KubeRay would name it %s)", c2, upgradeHeadName(c2), kubeRayHeadName(c2))
	t.Logf("serving at %.0f s, switched at %.0f s, old RayCluster deleted at %.0f s; %d polls of the live heads, never two of one cluster",
		tReady.Seconds(), tSwitched.Seconds(), tDeleted.Seconds(), nPolls)
	t.Logf("GET http://%s-serve-svc.%s.svc.%s:8000/ answered %s before the switch, %s after it", upgradeService, ns, c.ClusterDomain, served1, served2)
	t.Logf("kube-apiserver's calls of %s during the upgrade: %v", podWebhook, calls)
}

// failOnDeath fails t at once when a Ray container of rp died.
func failOnDeath(t *testing.T, rp *framework.RayPods) {
	t.Helper()
	if d := rp.Deaths(); len(d) > 0 {
		t.Fatalf("a Ray container exited: %v", d[0])
	}
}

// serveAnswer is the Echo application's answer through the RayService's serve
// Service (a ClusterIP: kube-proxy), from the test host with the cluster's
// DNS; it must come from CLUSTER.
func serveAnswer(t *testing.T, ns, cluster string) string {
	t.Helper()
	c := framework.Attach(t)
	url := fmt.Sprintf("http://%s-serve-svc.%s.svc.%s:8000/", upgradeService, ns, c.ClusterDomain)
	var body string
	framework.Eventually(t, 60*time.Second, time.Second, func() (bool, string) {
		resp, err := framework.HTTPGetInNetns(t, onlyNameserver(c.DNSIP), url)
		if err != nil {
			return false, fmt.Sprintf("GET %s: %v", url, err)
		}
		body = strings.TrimSpace(string(resp.Body))
		var echo struct {
			Cluster string `json:"cluster"`
			NodeIP  string `json:"node_ip"`
		}
		if resp.Status != 200 || json.Unmarshal(resp.Body, &echo) != nil {
			return false, fmt.Sprintf("GET %s: %d %q", url, resp.Status, body)
		}
		return echo.Cluster == cluster, fmt.Sprintf("GET %s: answered by cluster %q (%s), want %s", url, echo.Cluster, body, cluster)
	})
	return body
}
