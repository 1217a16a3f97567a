package e2e

// TestRealRay: Ray itself (ray[default] 2.60.0 from PyPI) runs in the Ray Pods
// the operators build (framework.RunRayPods: a network namespace per Pod
// holding its IP, the kubelet's resolv.conf, the command KubeRay wrote), and
// each check reads the head's own node table (the dashboard's state API, what
// `ray list nodes` prints).
//
//	v0.3.0/seed/without-ray-webhook  the FQDN thread's cluster: dnsPolicy None, CoreDNS the only
//	                                 nameserver, no search list. Without ray-webhook the workers'
//	                                 `ray start --address=<bare name>:6379` cannot resolve the head:
//	                                 for 60 s the head's table holds the head alone
//	v0.3.0/seed/with-ray-webhook     the same cluster with ray-webhook: both workers ALIVE in the
//	                                 head's table, having dialled the head Service's ClusterIP
//	                                 (kube-proxy) by the FQDN ray-webhook wrote
//	v0.3.0/seed/job-on-every-worker  `ray job submit` from the test host to the dashboard by its FQDN:
//	                                 a task pinned to each worker returns that worker's IP and host name
//	v0.3.0/same-name-two-namespaces  RayCluster rc-twin in two namespaces, the kubelet's search lists
//	                                 (ClusterFirst): each head's table holds its own worker only
//	v1.6.2/custom-cluster-domain     KubeRay v1.6.2 with CLUSTER_DOMAIN=example.internal, ray-webhook
//	                                 --cluster-domain, the kubelet's --cluster-domain and a CoreDNS
//	                                 for that zone: both workers ALIVE
//	v0.3.0/head-deleted, v1.6.2/rayjob-real-submitter, v1.6.2/head-deleted: real_ray_v1_test.go

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ray-webhook/tests/e2e/framework"
)

const (
	seedFixture    = "testdata/ray-seed-v1alpha1.yaml"
	rayV1Fixture   = "testdata/ray-v1.yaml"
	rayJobDir      = "testdata/ray-job"
	seedCluster    = "rc-seed"
	twinCluster    = "rc-twin"
	rayJoinTimeout = 3 * time.Minute
	// negativeWait is how long the negative control watches the head's table:
	// a worker that reaches the head joins within about 20 s here.
	negativeWait = 60 * time.Second
)

func TestRealRay(t *testing.T) {
	framework.Attach(t)
	t.Run("v0.3.0", func(t *testing.T) {
		framework.Operator(t, releaseLegacy)
		t.Run("seed", func(t *testing.T) {
			t.Run("without-ray-webhook", testSeedWithoutWebhook)
			ns, rc := seedWithWebhook(t)
			t.Run("job-on-every-worker", func(t *testing.T) { testJobOnEveryWorker(t, ns, rc) })
		})
		t.Run("same-name-two-namespaces", testTwinClusters)
		t.Run("head-deleted", func(t *testing.T) { testRealHeadDeleted(t, "testdata/ray-v1alpha1.yaml", 1) })
	})
	t.Run("v1.6.2", func(t *testing.T) {
		t.Run("custom-cluster-domain", testRealCustomDomain)
		testRealV1(t)
	})
}

// rayNode is one row of the head's node table (GET /api/v0/nodes, as `ray list nodes`).
type rayNode struct {
	NodeID   string `json:"node_id"`
	NodeIP   string `json:"node_ip"`
	IsHead   bool   `json:"is_head_node"`
	State    string `json:"state"`
	NodeName string `json:"node_name"`
}

// nodeTable reads the node table of the head at IP from its dashboard.
func nodeTable(ip string) ([]rayNode, error) {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	url := fmt.Sprintf("http://%s:%d/api/v0/nodes?limit=100", ip, dashboardPort)
	resp, err := client.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %v", url, err)
	}
	return decodeNodeTable(url, resp.StatusCode, b)
}

// decodeNodeTable reads the answer to GET URL of the dashboard's state API
// (/api/v0/nodes), STATUS and BODY.
func decodeNodeTable(url string, status int, body []byte) ([]rayNode, error) {
	var answer struct {
		Result bool   `json:"result"`
		Msg    string `json:"msg"`
		Data   struct {
			Result struct {
				Result []rayNode `json:"result"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &answer); err != nil {
		return nil, fmt.Errorf("GET %s: %d, %v", url, status, err)
	}
	if status != 200 || !answer.Result {
		return nil, fmt.Errorf("GET %s: %d %s", url, status, answer.Msg)
	}
	return answer.Data.Result.Result, nil
}

// aliveIPs are the IPs of the ALIVE nodes of a table, sorted.
func aliveIPs(nodes []rayNode) []string {
	var ips []string
	for _, n := range nodes {
		if n.State == "ALIVE" {
			ips = append(ips, n.NodeIP)
		}
	}
	sort.Strings(ips)
	return ips
}

func podIPs(pods ...corev1.Pod) []string {
	var ips []string
	for _, p := range pods {
		ips = append(ips, p.Status.PodIP)
	}
	sort.Strings(ips)
	return ips
}

// waitTable waits until the ALIVE nodes of rc's head's table are exactly its
// head and workers (at their Pod IPs), failing at once when a container of
// rp died (rp nil: deaths are expected).
func waitTable(t *testing.T, rp *framework.RayPods, rc rayCluster, timeout time.Duration) []rayNode {
	t.Helper()
	want := podIPs(append([]corev1.Pod{rc.Head}, rc.Workers...)...)
	var nodes []rayNode
	framework.Eventually(t, timeout, 2*time.Second, func() (bool, string) {
		if rp != nil {
			if d := rp.Deaths(); len(d) > 0 {
				t.Fatalf("a Ray container exited: %v", d[0])
			}
		}
		var err error
		if nodes, err = nodeTable(rc.Head.Status.PodIP); err != nil {
			return false, fmt.Sprintf("head %s's node table: %v", rc.Head.Name, err)
		}
		got := aliveIPs(nodes)
		return slices.Equal(got, want), fmt.Sprintf("head %s's table: ALIVE %v, want %v (all rows %+v)", rc.Head.Name, got, want, nodes)
	})
	return nodes
}

// rayList is `ray list nodes` against the dashboard of the head at IP, as a person reads it.
func rayList(t *testing.T, ip string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, framework.RayCommand(t, "ray"), "list", "nodes",
		"--address", fmt.Sprintf("http://%s:%d", ip, dashboardPort)).CombinedOutput()
	if err != nil {
		t.Fatalf("ray list nodes: %v\n%s", err, out)
	}
	return string(out)
}

// testSeedWithoutWebhook is the negative control: ray-webhook is not called
// for this namespace, so the workers keep KubeRay v0.3.0's bare name.
func testSeedWithoutWebhook(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-ray-seed-none")
	withoutRayWebhook(t, ns)
	rp := framework.RunRayPods(t, ns, framework.Kubelet{})
	createCluster(t, ns, seedFixture, seedCluster, map[string]string{"DNS_IP": c.DNSIP})
	rc := waitRunning(t, ns, seedCluster, 2, rayJoinTimeout)
	for _, w := range rc.Workers {
		if v := envValues(w.Spec.Containers[0], "FQ_RAY_IP"); len(v) > 0 {
			t.Fatalf("worker %s has FQ_RAY_IP %v: ray-webhook was called for namespace %s", w.Name, v, ns)
		}
	}
	// The head comes up alone; then the table is watched for the stated time.
	waitTable(t, nil, rayCluster{Head: rc.Head}, rayJoinTimeout)
	deadline := time.Now().Add(negativeWait)
	for time.Now().Before(deadline) {
		nodes, err := nodeTable(rc.Head.Status.PodIP)
		if err != nil {
			t.Fatalf("head %s's node table: %v", rc.Head.Name, err)
		}
		if got := aliveIPs(nodes); !slices.Equal(got, []string{rc.Head.Status.PodIP}) {
			t.Fatalf("without ray-webhook, head %s's table has ALIVE %v: a worker joined through the bare name", rc.Head.Name, got)
		}
		time.Sleep(2 * time.Second)
	}
	// Why: each worker's Ray could not resolve the bare name it was given.
	for _, w := range rc.Workers {
		log := rp.Log(w.Name)
		if want := fmt.Sprintf("Failed to resolve hostname '%s'", headService(seedCluster)); !strings.Contains(log, want) {
			t.Fatalf("worker %s's output does not say %q:\n%s", w.Name, want, lastLinesOf(log, 15))
		}
		t.Logf("worker %s (%s): %s", w.Name, w.Status.PodIP, strings.Join(workerArgs(w), " "))
	}
	t.Logf("without ray-webhook, after %v, head %s's table (ray list nodes):\n%s", negativeWait, rc.Head.Name, rayList(t, rc.Head.Status.PodIP))
	for _, d := range rp.Deaths() {
		t.Logf("died: %v", d)
	}
}

// seedWithWebhook is v0.3.0/seed/with-ray-webhook; it returns the running
// cluster for the job.
func seedWithWebhook(t *testing.T) (string, rayCluster) {
	var ns string
	var rc rayCluster
	var rp *framework.RayPods
	c := framework.Attach(t)
	ns = framework.NewNamespace(t, "e2e-ray-seed")
	rp = framework.RunRayPods(t, ns, framework.Kubelet{})
	ok := t.Run("with-ray-webhook", func(t *testing.T) {
		if strings.HasPrefix(c.KubeProxy, "none") {
			t.Fatalf("the workers reach the head through its ClusterIP, and this cluster runs no kube-proxy: %s", c.KubeProxy)
		}
		createCluster(t, ns, seedFixture, seedCluster, map[string]string{"DNS_IP": c.DNSIP})
		rc = waitRunning(t, ns, seedCluster, 2, rayJoinTimeout)
		for _, w := range rc.Workers {
			fq := oneEnv(t, &w, w.Spec.Containers[0], "FQ_RAY_IP")
			if want := fmt.Sprintf("%s.%s.svc.%s", rc.Service.Name, ns, c.ClusterDomain); fq != want {
				t.Fatalf("worker %s: FQ_RAY_IP %q, want %q", w.Name, fq, want)
			}
		}
		if rc.Service.Spec.ClusterIP == "" || rc.Service.Spec.ClusterIP == corev1.ClusterIPNone {
			t.Fatalf("head Service %s has ClusterIP %q; v0.3.0 makes a ClusterIP Service", rc.Service.Name, rc.Service.Spec.ClusterIP)
		}
		waitTable(t, rp, rc, rayJoinTimeout)
		for _, w := range rc.Workers {
			t.Logf("worker %s (%s): %s", w.Name, w.Status.PodIP, strings.Join(workerArgs(w), " "))
		}
		t.Logf("with ray-webhook, head %s's table (ray list nodes); head Service %s ClusterIP %s:\n%s",
			rc.Head.Name, rc.Service.Name, rc.Service.Spec.ClusterIP, rayList(t, rc.Head.Status.PodIP))
	})
	if !ok {
		t.FailNow()
	}
	return ns, rc
}

// testJobOnEveryWorker submits testdata/ray-job/where.py from the test host.
func testJobOnEveryWorker(t *testing.T, ns string, rc rayCluster) {
	c := framework.Attach(t)
	fqdn := fmt.Sprintf("%s.%s.svc.%s", rc.Service.Name, ns, c.ClusterDomain)
	dir, err := filepath.Abs(rayJobDir)
	if err != nil {
		t.Fatal(err)
	}
	out, err := framework.RunInTestHost(t, onlyNameserver(c.DNSIP), 3*time.Minute, framework.RayCommand(t, "ray"), "job", "submit",
		"--address", fmt.Sprintf("http://%s:%d", fqdn, dashboardPort), "--working-dir", dir, "--", "python", "where.py")
	if err != nil {
		t.Fatalf("ray job submit: %v\n%s", err, out)
	}
	var where map[string]string
	for _, line := range strings.Split(out, "\n") {
		if j, ok := strings.CutPrefix(strings.TrimSpace(line), "WHERE "); ok {
			if err := json.Unmarshal([]byte(j), &where); err != nil {
				t.Fatalf("the job's answer %q: %v", j, err)
			}
		}
	}
	want := map[string]string{}
	for _, w := range rc.Workers {
		want[w.Status.PodIP] = w.Name
	}
	if fmt.Sprint(where) != fmt.Sprint(want) {
		t.Fatalf("the job's tasks ran at %v, want one on each worker %v; its output:\n%s", where, want, lastLinesOf(out, 20))
	}
	t.Logf("ray job submit --address http://%s:%d -- python where.py: a task on each worker answered %v", fqdn, dashboardPort, where)
}

// testTwinClusters: one RayCluster name in two namespaces, ClusterFirst DNS.
func testTwinClusters(t *testing.T) {
	nsA := framework.NewNamespace(t, "e2e-ray-twin-a")
	nsB := framework.NewNamespace(t, "e2e-ray-twin-b")
	rpA := framework.RunRayPods(t, nsA, framework.Kubelet{})
	rpB := framework.RunRayPods(t, nsB, framework.Kubelet{})
	vars := map[string]string{"WORKERS": "1"}
	createCluster(t, nsA, "testdata/ray-v1alpha1.yaml", twinCluster, vars)
	createCluster(t, nsB, "testdata/ray-v1alpha1.yaml", twinCluster, vars)
	a := waitRunning(t, nsA, twinCluster, 1, rayJoinTimeout)
	b := waitRunning(t, nsB, twinCluster, 1, rayJoinTimeout)
	waitTable(t, rpA, a, rayJoinTimeout)
	waitTable(t, rpB, b, rayJoinTimeout)
	for _, rc := range []rayCluster{a, b} {
		t.Logf("%s/%s: head %s (%s), table ALIVE %v; worker %s (%s) FQ_RAY_IP %s", rc.NS, rc.Name, rc.Head.Name, rc.Head.Status.PodIP,
			aliveIPs(mustTable(t, rc.Head.Status.PodIP)), rc.Workers[0].Name, rc.Workers[0].Status.PodIP,
			oneEnv(t, &rc.Workers[0], rc.Workers[0].Spec.Containers[0], "FQ_RAY_IP"))
	}
}

func mustTable(t *testing.T, ip string) []rayNode {
	t.Helper()
	nodes, err := nodeTable(ip)
	if err != nil {
		t.Fatal(err)
	}
	return nodes
}

// testRealCustomDomain: KubeRay v1.6.2 and a cluster domain that is not cluster.local.
func testRealCustomDomain(t *testing.T) {
	c := framework.Attach(t)
	framework.StartCoreDNS(t, customDomain, c.DNSIP2)
	framework.WebhookReplica(t, []string{"--cluster-domain=" + customDomain}, nil)
	framework.Operator(t, releaseCurrent, "CLUSTER_DOMAIN="+customDomain)
	ns := framework.NewNamespace(t, "e2e-ray-domain")
	rp := framework.RunRayPods(t, ns, framework.Kubelet{ClusterDNS: c.DNSIP2, ClusterDomain: customDomain})
	createCluster(t, ns, rayV1Fixture, seedCluster, map[string]string{"WORKERS": "2"})
	rc := waitRunning(t, ns, seedCluster, 2, rayJoinTimeout)
	for _, w := range rc.Workers {
		fq := oneEnv(t, &w, w.Spec.Containers[0], "FQ_RAY_IP")
		if want := fmt.Sprintf("%s.%s.svc.%s", rc.Service.Name, ns, customDomain); fq != want {
			t.Fatalf("worker %s: FQ_RAY_IP %q, want %q", w.Name, fq, want)
		}
	}
	waitTable(t, rp, rc, rayJoinTimeout)
	t.Logf("KubeRay v1.6.2, cluster domain %s: head %s's table (ray list nodes):\n%s", customDomain, rc.Head.Name,
		rayList(t, rc.Head.Status.PodIP))
}

// workerArgs is the `ray start` line of a worker's Ray container.
func workerArgs(p corev1.Pod) []string {
	c := p.Spec.Containers[0]
	return append(append([]string{}, c.Command...), c.Args...)
}

// withoutRayWebhook leaves namespace NS out of every entry of ray-webhook's
// webhook configurations (their namespaceSelector's NotIn list) until t
// ends, and waits until the API server no longer calls it there.
func withoutRayWebhook(t *testing.T, ns string) {
	t.Helper()
	c := framework.Attach(t)
	ctx := context.Background()
	adm := c.Kube.AdmissionregistrationV1()
	exclude := func(sel *metav1.LabelSelector, add bool) {
		for i := range sel.MatchExpressions {
			e := &sel.MatchExpressions[i]
			if e.Key == "kubernetes.io/metadata.name" && e.Operator == metav1.LabelSelectorOpNotIn {
				e.Values = slices.DeleteFunc(e.Values, func(v string) bool { return v == ns })
				if add {
					e.Values = append(e.Values, ns)
				}
				return
			}
		}
		if add {
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{
				Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpNotIn, Values: []string{ns}})
		}
	}
	update := func(add bool) error {
		m, err := adm.MutatingWebhookConfigurations().Get(ctx, "ray-webhook", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range m.Webhooks {
			if m.Webhooks[i].NamespaceSelector == nil {
				m.Webhooks[i].NamespaceSelector = &metav1.LabelSelector{}
			}
			exclude(m.Webhooks[i].NamespaceSelector, add)
		}
		if _, err := adm.MutatingWebhookConfigurations().Update(ctx, m, metav1.UpdateOptions{}); err != nil {
			return err
		}
		v, err := adm.ValidatingWebhookConfigurations().Get(ctx, "ray-webhook", metav1.GetOptions{})
		if err != nil {
			return err
		}
		for i := range v.Webhooks {
			if v.Webhooks[i].NamespaceSelector == nil {
				v.Webhooks[i].NamespaceSelector = &metav1.LabelSelector{}
			}
			exclude(v.Webhooks[i].NamespaceSelector, add)
		}
		_, err = adm.ValidatingWebhookConfigurations().Update(ctx, v, metav1.UpdateOptions{})
		return err
	}
	// A worker as v0.3.0 builds it, dry run: ray-webhook adds FQ_RAY_IP.
	probe := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "probe-worker", Labels: map[string]string{
			"ray.io/node-type": "worker", "ray.io/cluster": "probe", "ray.io/group": "small"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.60.0",
			Command: []string{"/bin/bash", "-lc", "--"}, Args: []string{"ray start --address=probe-head-svc:6379 --block"},
			Env: []corev1.EnvVar{{Name: "RAY_IP", Value: "probe-head-svc"}}}}},
	}
	mutated := func() ([]string, error) {
		got, err := c.Kube.CoreV1().Pods(ns).Create(ctx, probe, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err != nil {
			return nil, err
		}
		return envValues(got.Spec.Containers[0], "FQ_RAY_IP"), nil
	}
	if v, err := mutated(); err != nil || len(v) == 0 {
		t.Fatalf("before leaving %s out, a dry-run worker got FQ_RAY_IP %v (%v): the probe does not show ray-webhook's call", ns, v, err)
	}
	if err := update(true); err != nil {
		t.Fatalf("leaving %s out of ray-webhook's configurations: %v", ns, err)
	}
	t.Cleanup(func() {
		if err := update(false); err != nil {
			t.Errorf("putting %s back into ray-webhook's configurations: %v", ns, err)
		}
	})
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, func() (bool, string) {
		v, err := mutated()
		if err != nil {
			return false, "dry run: " + err.Error()
		}
		if len(v) > 0 {
			return false, fmt.Sprintf("a dry-run worker in %s still gets FQ_RAY_IP %v", ns, v)
		}
		return true, ""
	})
}
