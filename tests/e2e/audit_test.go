package e2e

// TestAudit: `ray-webhook audit` and `serve --audit-interval` on the live API
// (old checks 23e and 23f). A RayCluster of KubeRay v1.6.2 gets an extra
// head behind the operator's back, through a path the webhooks never see: a
// Pod created without Ray labels, then labelled (the Pod webhooks match
// CREATE only).
//
//	live-audit        as deploy/'s ServiceAccount: with the base's ClusterRole the audit exits 2 with
//	                  the API's 403 for rayclusters; with deploy/overlays/audit's it finds nothing, then
//	                  the extra head: exit 1, one extra-head finding naming it, a table row; the
//	                  audit's Pod list is one cluster-wide, paged list (kube-apiserver's audit log)
//	watched-audit     a replica auditing by list and watch, everything judged only every 10 minutes
//	                  (not in the EndpointSlice): its gauge ray_webhook_rayclusters_with_extra_heads
//	                  counts the cluster while the extra head lives, one less within 5 s of its
//	                  deletion, and one more within 5 s of another; its log has the audit lines
//	policy-reports    the same replica writes openreports.io Reports (the CRDs of
//	                  github.com/openreports/reports-api, installed by the framework): the extra head and a
//	                  drifted worker (of a group of two made behind the operator) are results of the namespace's Report, which is updated in place once
//	                  they are fixed and deleted when nothing is left; `audit --output report` prints
//	                  objects the API server takes (a server dry run)

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"ray-webhook/tests/e2e/framework"
)

const auditCluster = "rc-audit"

func TestAudit(t *testing.T) {
	framework.Attach(t)
	framework.Operator(t, releaseCurrent)
	t.Run("live-audit", testAuditLive)
	t.Run("watched-audit", testAuditWatched)
	t.Run("policy-reports", testAuditPolicyReports)
}

// auditPolicyReport is the part of an openreports.io/v1alpha1 Report the test reads.
type auditPolicyReport struct {
	Metadata struct {
		ResourceVersion string            `json:"resourceVersion"`
		UID             string            `json:"uid"`
		Labels          map[string]string `json:"labels"`
	} `json:"metadata"`
	Summary struct {
		Fail int `json:"fail"`
	} `json:"summary"`
	Results []struct {
		Policy    string `json:"policy"`
		Rule      string `json:"rule"`
		Result    string `json:"result"`
		Severity  string `json:"severity"`
		Message   string `json:"message"`
		Resources []struct {
			Kind string `json:"kind"`
			Name string `json:"name"`
		} `json:"resources"`
	} `json:"results"`
}

// auditReportIn reads ray-webhook's Report of NS; nil when there is none.
func auditReportIn(t *testing.T, ns string) (*auditPolicyReport, string) {
	t.Helper()
	r := framework.Kubectl(t, "", "-n", ns, "get", "reports.openreports.io", "ray-webhook-audit", "-o", "json")
	if r.Err != nil {
		if strings.Contains(r.Combined(), "NotFound") {
			return nil, ""
		}
		t.Fatalf("kubectl get reports.openreports.io: %v: %s", r.Err, r.Combined())
	}
	var rep auditPolicyReport
	if err := json.Unmarshal([]byte(r.Stdout), &rep); err != nil {
		t.Fatalf("the Report does not parse: %v", err)
	}
	return &rep, r.Stdout
}

// auditHasResult says whether the report has a failed result of RULE naming KIND/NAME.
func auditHasResult(rep *auditPolicyReport, rule, kind, name string) bool {
	if rep == nil {
		return false
	}
	for _, r := range rep.Results {
		if r.Rule == rule && r.Result == "fail" && r.Policy == "ray-webhook" && len(r.Resources) == 1 &&
			r.Resources[0].Kind == kind && r.Resources[0].Name == name {
			return true
		}
	}
	return false
}

// auditDriftGroup creates two workers of CLUSTER in NS in a group "drift"
// that its spec does not have (so the operator, which deletes a group's Pods
// beyond its replicas, leaves them alone), NAME-a and NAME-b, copies of the
// operator's worker of which NAME-b has one env entry more: NAME-b drifted.
// Both are made behind the webhooks' back, as auditExtraHead does.
func auditDriftGroup(t *testing.T, ns, cluster, name string) {
	t.Helper()
	c := framework.Attach(t)
	ctx := context.Background()
	workers := rayPods(t, ns, cluster, "worker")
	if len(workers) == 0 {
		t.Fatalf("%s/%s has no worker to copy", ns, cluster)
	}
	labels := map[string]string{}
	for k, v := range workers[0].Labels {
		labels[k] = v
	}
	labels["ray.io/group"] = "drift"
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	for _, suffix := range []string{"a", "b"} {
		spec := *workers[0].Spec.DeepCopy()
		spec.NodeName = ""
		if suffix == "b" {
			spec.Containers[0].Env = append(spec.Containers[0].Env, corev1.EnvVar{Name: "DRIFTED", Value: "1"})
		}
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name + "-" + suffix}, Spec: spec}
		if _, err := c.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating the unlabelled Pod %s: %v", pod.Name, err)
		}
		if _, err := c.Kube.CoreV1().Pods(ns).Patch(ctx, pod.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatalf("labelling %s as a worker of %s: %v", pod.Name, cluster, err)
		}
	}
}

func testAuditPolicyReports(t *testing.T) {
	c := framework.Attach(t)
	ctx := context.Background()
	ns := framework.NewNamespace(t, "e2e-audit-reports")
	auditClusterWithHead(t, ns)
	auditGrant(t, ns)
	extra := auditCluster + "-head-behind"
	drifted := auditCluster + "-drift-b"
	auditExtraHead(t, ns, extra)
	auditDriftGroup(t, ns, auditCluster, auditCluster+"-drift")

	// What the command prints is what the API server takes for the installed kind.
	out, stderr, code := auditRun(t, "--output", "report", "--namespace", ns)
	if code != 1 || !strings.Contains(out, `"kind": "Report"`) {
		t.Fatalf("audit --output report: exit %d (want 1), %s%s", code, truncate(out, 300), truncate(stderr, 200))
	}
	if r := framework.Kubectl(t, out, "apply", "--dry-run=server", "-f", "-"); r.Err != nil {
		t.Errorf("the API server refuses what audit --output report prints: %v: %s", r.Err, r.Combined())
	}

	r := framework.StartReplica(t, framework.ReplicaOptions{Name: "ray-webhook-reports", Route: framework.RouteNone,
		Args: []string{"--audit-interval=1s"}})
	var rep *auditPolicyReport
	var raw string
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, func() (bool, string) {
		rep, raw = auditReportIn(t, ns)
		return auditHasResult(rep, "extra-head", "RayCluster", auditCluster) && auditHasResult(rep, "worker-drift", "Pod", drifted),
			fmt.Sprintf("the Report of %s has no extra-head result for %s and worker-drift result for %s: %s (replica log: %s)",
				ns, auditCluster, drifted, truncate(raw, 400), r.Process.Log)
	})
	if rep.Metadata.Labels["app.kubernetes.io/managed-by"] != "ray-webhook" || rep.Summary.Fail != len(rep.Results) {
		t.Errorf("the Report's label or summary is off: %s", truncate(raw, 600))
	}
	t.Logf("the Report of %s while the extra head and the drifted worker live:\n%s", ns, raw)

	// Judged every second (--audit-interval=1s), nothing changed: the Report is not written again.
	written := rep.Metadata.ResourceVersion
	time.Sleep(3500 * time.Millisecond)
	if again, raw2 := auditReportIn(t, ns); again == nil || again.Metadata.ResourceVersion != written {
		t.Errorf("the Report was written again with nothing changed (resourceVersion %s, then): %s", written,
			truncate(raw2, 400))
	}

	// Fixed: the drifted worker and the extra head are deleted; the Report is
	// updated in place (same uid) without their results, then deleted once empty.
	uid := rep.Metadata.UID
	zero := int64(0)
	if err := c.Kube.CoreV1().Pods(ns).Delete(ctx, drifted, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("deleting the drifted worker: %v", err)
	}
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, func() (bool, string) {
		rep, raw = auditReportIn(t, ns)
		return rep != nil && !auditHasResult(rep, "worker-drift", "Pod", drifted) &&
				auditHasResult(rep, "extra-head", "RayCluster", auditCluster),
			fmt.Sprintf("the Report of %s still names %s, or lost the extra head: %s", ns, drifted, truncate(raw, 400))
	})
	if rep.Metadata.UID != uid {
		t.Errorf("the Report was replaced (uid %s, then %s), not updated in place", uid, rep.Metadata.UID)
	}
	if err := c.Kube.CoreV1().Pods(ns).Delete(ctx, extra, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Fatalf("deleting the extra head: %v", err)
	}
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, func() (bool, string) {
		rep, raw = auditReportIn(t, ns)
		return rep == nil, fmt.Sprintf("the Report of %s is still there: %s", ns, truncate(raw, 400))
	})
	framework.WaitLines(t, r.Process.Log, 1, "info audit reports applied=")
	t.Logf("%s", firstLine(framework.Lines(r.Process.Log, "info audit reports applied=")))
}

// auditReport is `ray-webhook audit --output json`.
type auditReport struct {
	Findings []struct {
		Rule      string `json:"rule"`
		Kind      string `json:"kind"`
		Namespace string `json:"namespace"`
		Name      string `json:"name"`
		Message   string `json:"message"`
	} `json:"findings"`
}

// auditRun runs ray-webhook audit against kube-apiserver with deploy/'s
// ServiceAccount token: stdout, stderr, exit status.
func auditRun(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	c := framework.Attach(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.RayWebhook, append([]string{"audit", "--kube-api-server", c.APIServer,
		"--kube-ca-file", filepath.Join(c.PKI, "ca.crt"), "--kube-token-file", c.WebhookToken}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("ray-webhook audit: %v", err)
	}
	return out.String(), errOut.String(), code
}

// auditClusterRoleDocument is the ClusterRole of a rendering, as YAML.
func auditClusterRoleDocument(t *testing.T, rendered string) string {
	t.Helper()
	for _, doc := range strings.Split(rendered, "\n---\n") {
		var obj struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal([]byte(doc), &obj); err == nil && obj.Kind == "ClusterRole" {
			return doc
		}
	}
	t.Fatalf("the rendering has no ClusterRole")
	return ""
}

// auditGrant applies deploy/overlays/audit's ClusterRole (the ray.io read
// grant), waits until the audit is allowed, and applies the base's again when
// t ends, so the suite goes on with deploy/'s RBAC as shipped.
func auditGrant(t *testing.T, ns string) {
	t.Helper()
	c := framework.Attach(t)
	base := auditClusterRoleDocument(t, framework.MustKubectl(t, "", "kustomize", filepath.Join(c.DeploySrc, "deploy", "overlays", "static-certs")))
	overlay := auditClusterRoleDocument(t, framework.MustKubectl(t, "", "kustomize", filepath.Join(c.DeploySrc, "deploy", "overlays", "audit")))
	t.Cleanup(func() {
		if r := framework.Kubectl(t, base, "apply", "-f", "-"); r.Err != nil {
			t.Errorf("applying the base's ClusterRole again: %v\n%s", r.Err, r.Combined())
		}
	})
	framework.MustKubectl(t, overlay, "apply", "-f", "-")
	// kube-apiserver's RBAC authorizer sees the new rule once its informer has it.
	framework.Eventually(t, 15*time.Second, 250*time.Millisecond, func() (bool, string) {
		_, stderr, code := auditRun(t, "--output", "json", "--namespace", ns)
		return code != 2, fmt.Sprintf("audit still exits 2: %s", strings.TrimSpace(stderr))
	})
}

// auditCluster creates RayCluster rc-audit in NS and waits for its running
// head; then an extra head, made behind the webhooks' back, named extra.
func auditClusterWithHead(t *testing.T, ns string) rayCluster {
	t.Helper()
	createCluster(t, ns, "testdata/raycluster-v1.yaml", auditCluster, map[string]string{"REPLICAS": "1", "MAX_REPLICAS": "1"})
	return waitRunning(t, ns, auditCluster, 1, 2*time.Minute)
}

func auditExtraHead(t *testing.T, ns, name string) {
	t.Helper()
	c := framework.Attach(t)
	ctx := context.Background()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-head", Image: "rayproject/ray:2.52.0"}}},
	}
	if _, err := c.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the unlabelled Pod %s: %v", name, err)
	}
	patch := fmt.Sprintf(`{"metadata":{"labels":{"ray.io/cluster":%q,"ray.io/node-type":"head","ray.io/group":"headgroup"}}}`, auditCluster)
	if _, err := c.Kube.CoreV1().Pods(ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("labelling %s as a head of %s: %v", name, auditCluster, err)
	}
}

func auditExtraHeadFindings(t *testing.T, out, ns, extra string) int {
	t.Helper()
	var r auditReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("the audit's JSON does not parse: %v: %s", err, truncate(out, 300))
	}
	n := 0
	for _, f := range r.Findings {
		if f.Rule == "extra-head" && f.Kind == "RayCluster" && f.Namespace == ns && f.Name == auditCluster &&
			(extra == "" || strings.Contains(f.Message, `"`+extra+`"`)) {
			n++
		}
	}
	return n
}

func testAuditLive(t *testing.T) {
	ns := framework.NewNamespace(t, "e2e-audit-live")
	auditClusterWithHead(t, ns)

	_, stderr, code := auditRun(t, "--output", "json")
	if code != 2 || !strings.Contains(stderr, "answered 403: rayclusters.ray.io is forbidden") {
		t.Errorf("with the base's ClusterRole: want exit 2 and the API's 403 for rayclusters, got exit %d: %s", code, truncate(stderr, 300))
	}
	auditGrant(t, ns)
	out, stderr, code := auditRun(t, "--output", "json", "--namespace", ns)
	if code == 2 || auditExtraHeadFindings(t, out, ns, "") != 0 {
		t.Fatalf("before the extra head: exit %d, stderr %s, report %s", code, truncate(stderr, 200), truncate(out, 300))
	}

	extra := auditCluster + "-head-behind"
	started := time.Now()
	auditExtraHead(t, ns, extra)
	out, stderr, code = auditRun(t, "--output", "json")
	if n := auditExtraHeadFindings(t, out, ns, extra); code != 1 || n != 1 {
		t.Errorf("with the extra head: want exit 1 and one extra-head finding naming %s, got exit %d, %d findings (%s)", extra, code, n, truncate(stderr, 200))
	}
	table, _, _ := auditRun(t, "--namespace", ns)
	row := regexp.MustCompile(`(?m)^extra-head +RayCluster +` + regexp.QuoteMeta(ns) + ` +` + auditCluster + ` +-$`)
	if !row.MatchString(table) {
		t.Errorf("the table has no extra-head row for %s/%s:\n%s", ns, auditCluster, table)
	}
	t.Logf("ray-webhook audit --namespace %s:\n%s", ns, strings.TrimSpace(table))

	// The audit lists Ray Pods cluster-wide, paged, with the Ray Pod selector.
	const uri = "/api/v1/pods?limit=500&labelSelector=ray.io%2Fnode-type%20in%20%28head%2Cworker%29%2Cray.io%2Fcluster"
	if !auditLogHas(t, started, func(e framework.AuditEvent) bool {
		return e.Verb == "list" && e.ObjectRef.Resource == "pods" && e.ResponseStatus.Code == 200 &&
			e.User.Username == "system:serviceaccount:ray-webhook-system:ray-webhook" && strings.HasPrefix(e.RequestURI, uri)
	}) {
		t.Errorf("kube-apiserver's audit log has no paged cluster-wide list of Ray Pods by the webhook's ServiceAccount since %s", started.Format(time.RFC3339))
	}
}

// auditLogHas says whether an event received after SINCE matches.
func auditLogHas(t *testing.T, since time.Time, match func(framework.AuditEvent) bool) bool {
	t.Helper()
	for _, e := range framework.AuditEvents(t) {
		if !e.RequestReceivedTimestamp.Before(since.Add(-time.Second)) && match(e) {
			return true
		}
	}
	return false
}

func testAuditWatched(t *testing.T) {
	c := framework.Attach(t)
	ctx := context.Background()
	ns := framework.NewNamespace(t, "e2e-audit-watched")
	auditClusterWithHead(t, ns)
	auditGrant(t, ns)
	extra := auditCluster + "-head-behind"
	auditExtraHead(t, ns, extra)

	// A judgement of everything only every 10 minutes: what follows within seconds comes by the watches.
	r := framework.StartReplica(t, framework.ReplicaOptions{Name: "ray-webhook-audit", Route: framework.RouteNone,
		Args: []string{"--audit-interval=10m"}})
	gauge := func() (int, error) { return auditGauge(c, r) }
	var withExtra int
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, func() (bool, string) {
		v, err := gauge()
		withExtra = v
		return err == nil && v >= 1, fmt.Sprintf("ray_webhook_rayclusters_with_extra_heads %d (%v)", v, err)
	})
	// follow times a change until the gauge shows it, within the 5 s the watched audit promises.
	follow := func(what string, change func(), want func(int) bool) time.Duration {
		start := time.Now()
		change()
		var seen int
		framework.Eventually(t, 5*time.Second, 100*time.Millisecond, func() (bool, string) {
			v, err := gauge()
			seen = v
			return err == nil && want(v), fmt.Sprintf("%s: ray_webhook_rayclusters_with_extra_heads %d (%v) 5 s later",
				what, v, err)
		})
		t.Logf("%s: the gauge %d after %s", what, seen, time.Since(start).Round(10*time.Millisecond))
		return time.Since(start)
	}
	follow("the extra head deleted", func() {
		if err := c.Kube.CoreV1().Pods(ns).Delete(ctx, extra, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Fatalf("deleting the extra head: %v", err)
		}
	}, func(v int) bool { return v == withExtra-1 })
	follow("another extra head labelled", func() { auditExtraHead(t, ns, extra+"-2") },
		func(v int) bool { return v == withExtra })
	framework.WaitLines(t, r.Process.Log, 1, "info audit pods=")
	t.Logf("%s", firstLine(framework.Lines(r.Process.Log, "info audit pods=")))
}

// auditGauge reads ray_webhook_rayclusters_with_extra_heads from the
// replica's /metrics.
func auditGauge(c *framework.Cluster, r *framework.Replica) (int, error) {
	return replicaSeries(c, r, "ray_webhook_rayclusters_with_extra_heads")
}

// replicaSeries reads one series (name and labels, as the exposition writes
// them) from the replica's /metrics, on its TLS port as a scraper would.
func replicaSeries(c *framework.Cluster, r *framework.Replica, series string) (int, error) {
	ca, err := os.ReadFile(filepath.Join(c.WebhookCertDir, "ca.crt"))
	if err != nil {
		return 0, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "ray-webhook.ray-webhook-system.svc"},
	}}
	resp, err := client.Get(fmt.Sprintf("https://%s:%d/metrics", r.IP, r.Port))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == series {
			v, err := strconv.ParseFloat(f[1], 64)
			return int(v), err
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s on /metrics", series)
}
