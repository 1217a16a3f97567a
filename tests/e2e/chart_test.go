package e2e

// TestChart: charts/ray-webhook, rendered by the Helm of tests/e2e/helm,
// offline and on the API server (old checks 25a to 25c). Offline checks read
// the chart's folder; the applied and installed ones use what users install,
// its `helm package` (chartPackage).
//
//	offline               tests/deploy/helm_chart.sh with the suite's Helm, kubectl and server: lint,
//	                      the defaults equal deploy/overlays/cert-manager field by field (and each
//	                      deliberate drift is caught), variants, values
//	applied               three renderings (cert-manager, self-signed, Secret with matchConditions) pass
//	                      apply --dry-run=server; the Secret rendering with the suite's CA, its port and
//	                      clusterDomain chart.example.internal replaces deploy/'s configurations and a
//	                      replica runs with its Deployment's arguments and environment: a worker is
//	                      mutated with that domain. With webhooks.matchConditions.enabled the CEL is on
//	                      the two Ray Pod entries alone, a worker is still mutated, Pods without
//	                      ray.io/cluster (or with an empty one) are stored with no review, and with the
//	                      replica stopped the worker is refused while such a Pod is created
//	install-upgrade       the package and a second version of it (next patch, -e2e) pushed with helm push
//	                      to the suite's registry as OCI artifacts; helm install from oci:// by version
//	                      (self-signed, --create-namespace) with the image from that registry by digest,
//	                      helm upgrade to the second version with replicas=3: the Deployment names the
//	                      image by digest and each chart version in turn, the Secret's tls.crt and the
//	                      caBundle are kept (the chart's lookup), the caBundle is the Secret's ca.crt;
//	                      helm uninstall leaves nothing

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"ray-webhook/tests/e2e/framework"
)

const chartDomain = "chart.example.internal"

func TestChart(t *testing.T) {
	c := framework.Attach(t)
	if _, err := os.Stat(filepath.Join(c.Bin, "helm")); err != nil {
		t.Fatalf("no Helm (scripts/e2e.sh --build builds it; see tests/e2e/.bin/helm.build.log): %v", err)
	}
	t.Run("offline", testChartOffline)
	t.Run("applied", testChartApplied)
	t.Run("install-upgrade", testChartInstallUpgrade)
}

// chartHelm runs the suite's Helm with its own files under WORK.
func chartHelm(t *testing.T, args ...string) (string, error) {
	t.Helper()
	c := framework.Attach(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	home := filepath.Join(c.Work, "go-helm-home")
	cmd := exec.CommandContext(ctx, filepath.Join(c.Bin, "helm"), args...)
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config",
		"HELM_DATA_HOME="+home+"/data", "KUBECONFIG="+c.Kubeconfig)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("helm %s: %v: %s", strings.Join(args, " "), err, truncate(errOut.String(), 400))
	}
	return out.String(), nil
}

var (
	chartOnce    sync.Once
	chartArchive string
	chartErr     error
)

// chartPackage is `helm package` of charts/ray-webhook, what users install
// (made once per run, into WORK/go-chart): a tgz named for the chart's
// version, holding its Chart.yaml, values, schema and templates.
func chartPackage(t *testing.T) string {
	t.Helper()
	c := framework.Attach(t)
	chartOnce.Do(func() {
		dir := filepath.Join(c.Work, "go-chart")
		if chartErr = os.MkdirAll(dir, 0o755); chartErr != nil {
			return
		}
		var out string
		if out, chartErr = chartHelm(t, "package", filepath.Join(c.Repo, "charts", "ray-webhook"), "--destination", dir); chartErr != nil {
			return
		}
		// "Successfully packaged chart and saved it to: PATH"
		_, chartArchive, _ = strings.Cut(strings.TrimSpace(out), "saved it to: ")
		var list []byte
		if list, chartErr = exec.Command("tar", "-tzf", chartArchive).Output(); chartErr != nil {
			chartErr = fmt.Errorf("tar -tzf %s: %v", chartArchive, chartErr)
			return
		}
		for _, want := range []string{"ray-webhook/Chart.yaml", "ray-webhook/values.yaml", "ray-webhook/values.schema.json",
			"ray-webhook/templates/deployment.yaml"} {
			if !strings.Contains("\n"+string(list), "\n"+want+"\n") {
				chartErr = fmt.Errorf("the package %s lacks %s:\n%s", chartArchive, want, list)
			}
		}
	})
	if chartErr != nil {
		t.Fatalf("helm package: %v", chartErr)
	}
	return chartArchive
}

// chartRender is `helm template` of release ray-webhook in
// ray-webhook-system (as deploy/ names it) for this API server's version.
func chartRender(t *testing.T, sets ...string) string {
	t.Helper()
	c := framework.Attach(t)
	v, err := c.Kube.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	args := []string{"template", "ray-webhook", chartPackage(t),
		"--namespace", "ray-webhook-system", "--kube-version", v.GitVersion}
	for _, s := range sets {
		args = append(args, "--set", s)
	}
	out, err := chartHelm(t, args...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// chartDeployment is the Deployment of a rendering.
func chartDeployment(t *testing.T, rendered string) *appsv1.Deployment {
	t.Helper()
	for _, doc := range strings.Split(rendered, "\n---\n") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err == nil && d.Kind == "Deployment" {
			return &d
		}
	}
	t.Fatalf("the rendering has no Deployment")
	return nil
}

func testChartOffline(t *testing.T) {
	c := framework.Attach(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(c.Repo, "tests", "deploy", "helm_chart.sh"),
		"--helm", filepath.Join(c.Bin, "helm"), "--kubectl", c.Kubectl, "--server", c.RayWebhook)
	out, err := cmd.CombinedOutput()
	var failed []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "FAIL") {
			failed = append(failed, truncate(line, 300))
		}
	}
	if err != nil || len(failed) > 0 {
		t.Fatalf("tests/deploy/helm_chart.sh: %v; %d FAIL lines:\n%s\n%s", err, len(failed), strings.Join(failed, "\n"),
			lastLinesOf(string(out), 5))
	}
	t.Logf("tests/deploy/helm_chart.sh: %s", lastLinesOf(string(out), 1))
}

// chartPod is a Pod shaped like a KubeRay worker of rc-chart, with LABELS.
func chartPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "ray-worker", Image: "rayproject/ray:2.9.0", Command: []string{"/bin/bash", "-c", "--"},
			Args: []string{"ray start --address=rc-chart-head-svc:6379 --block"},
		}}},
	}
}

func testChartApplied(t *testing.T) {
	c := framework.Attach(t)
	ctx := context.Background()
	ca, err := os.ReadFile(filepath.Join(c.WebhookCerts, "ca.crt"))
	if err != nil {
		t.Fatalf("the suite's CA: %v", err)
	}
	caB64 := base64.StdEncoding.EncodeToString(ca)

	// The three certificate sources, as a server-side dry run (cert-manager's CRDs are installed).
	for _, variant := range []struct {
		name string
		sets []string
	}{
		{"cert-manager", nil},
		{"self-signed", []string{"certificates.source=self-signed"}},
		{"secret", []string{"certificates.source=secret", "certificates.caBundle=" + caB64, "webhooks.matchConditions.enabled=true"}},
	} {
		rendered := chartRender(t, append([]string{"namespace.create=true"}, variant.sets...)...)
		if r := framework.Kubectl(t, rendered, "apply", "--dry-run=server", "-f", "-"); r.Err != nil {
			t.Errorf("rendering %s: apply --dry-run=server: %v\n%s", variant.name, r.Err, lastLinesOf(r.Stderr, 4))
		}
	}

	// For real: the suite's CA as caBundle (the Secret the server reads is the
	// folder the suite mounts), its port, and a cluster domain of its own, so
	// the mutation shows that the chart's Deployment configured the server.
	live := []string{"namespace.create=true", "certificates.source=secret", "certificates.caBundle=" + caB64,
		fmt.Sprintf("containerPort=%d", c.WebhookPort), "clusterDomain=" + chartDomain}
	plain := chartRender(t, live...)
	withCEL := chartRender(t, append(live, "webhooks.matchConditions.enabled=true")...)

	// Back to deploy/'s configurations when the test ends (registered before
	// the replica, so it runs after the slice is pointed back).
	t.Cleanup(func() { chartRestoreDeploy(t) })
	for _, k := range []string{"mutatingwebhookconfiguration", "validatingwebhookconfiguration"} {
		framework.MustKubectl(t, "", "delete", k, "ray-webhook")
	}
	framework.MustKubectl(t, plain, "apply", "-f", "-")
	m, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "ray-webhook", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the chart's mutating configuration: %v", err)
	}
	v, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "ray-webhook", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the chart's validating configuration: %v", err)
	}
	for kind, labels := range map[string]map[string]string{"mutating": m.Labels, "validating": v.Labels} {
		if labels["helm.sh/chart"] != "ray-webhook-0.1.0" {
			t.Errorf("%s configuration ray-webhook is not the chart's (helm.sh/chart %q)", kind, labels["helm.sh/chart"])
		}
	}
	for _, w := range m.Webhooks {
		if !bytes.Equal(w.ClientConfig.CABundle, ca) {
			t.Errorf("mutating %s: caBundle is not the suite's CA", w.Name)
		}
	}
	for _, w := range v.Webhooks {
		if !bytes.Equal(w.ClientConfig.CABundle, ca) {
			t.Errorf("validating %s: caBundle is not the suite's CA", w.Name)
		}
	}
	if _, err := c.Kube.AppsV1().Deployments("ray-webhook-system").Get(ctx, "ray-webhook", metav1.GetOptions{}); err != nil {
		t.Errorf("Deployment ray-webhook: %v", err)
	}
	if _, err := c.Kube.PolicyV1().PodDisruptionBudgets("ray-webhook-system").Get(ctx, "ray-webhook", metav1.GetOptions{}); err != nil {
		t.Errorf("PodDisruptionBudget ray-webhook: %v", err)
	}
	if _, err := c.Kube.CoreV1().ServiceAccounts("ray-webhook-system").Get(ctx, "ray-webhook", metav1.GetOptions{}); err != nil {
		t.Errorf("ServiceAccount ray-webhook: %v", err)
	}
	if _, err := c.Kube.CoreV1().Services("ray-webhook-system").Get(ctx, "ray-webhook", metav1.GetOptions{}); err != nil {
		t.Errorf("Service ray-webhook: %v", err)
	}

	// The server as the chart's Deployment runs it: its arguments (but the
	// addresses and the certificate folder, which are this suite's) and env.
	d := chartDeployment(t, plain)
	args := framework.DeploymentArgs(d.Spec.Template.Spec.Containers[0].Args)
	var env []string
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	r := framework.StartReplica(t, framework.ReplicaOptions{Name: "ray-webhook-chart", Port: c.WebhookPort,
		BaseArgs: append([]string{}, args...), Env: env})
	ns := framework.NewNamespace(t, "e2e-chart")
	fq := fmt.Sprintf("rc-chart-head-svc.%s.svc.%s", ns, chartDomain)
	ray := map[string]string{"ray.io/node-type": "worker", "ray.io/cluster": "rc-chart", "ray.io/group": "small"}
	// What the objectSelector lets through but the server does not count as
	// a Ray Pod: no ray.io/cluster, or an empty one.
	noCluster := map[string]string{"ray.io/node-type": "worker"}
	emptyCluster := map[string]string{"ray.io/node-type": "worker", "ray.io/cluster": ""}
	create := func(name string, labels map[string]string) (*corev1.Pod, error) {
		return c.Kube.CoreV1().Pods(ns).Create(ctx, chartPod(name, labels), metav1.CreateOptions{})
	}
	mutated := func(p *corev1.Pod) bool {
		ct := p.Spec.Containers[0]
		return len(envValues(ct, "FQ_RAY_IP")) == 1 && envValues(ct, "FQ_RAY_IP")[0] == fq &&
			strings.Contains(strings.Join(ct.Args, " "), "--address="+fq+":6379")
	}
	sent := func(name string) int { return framework.CountLines(r.Process.Log, "pod="+name+" ") }

	// (a) without matchConditions: the worker is mutated; a Pod without ray.io/cluster is still sent.
	if p, err := create("chart-worker-a", ray); err != nil || !mutated(p) {
		t.Errorf("chart-worker-a: want FQ_RAY_IP and --address on %s (err %v)", fq, err)
	}
	if _, err := create("chart-no-cluster-a", noCluster); err != nil {
		t.Errorf("chart-no-cluster-a: %v", err)
	}
	framework.WaitLines(t, r.Process.Log, 1, "pod=chart-no-cluster-a ")

	// (b) with matchConditions: the API server evaluates the CEL.
	framework.MustKubectl(t, withCEL, "apply", "-f", "-")
	conditions := func() string {
		m, _ := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "ray-webhook", metav1.GetOptions{})
		v, _ := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "ray-webhook", metav1.GetOptions{})
		var parts []string
		for _, w := range m.Webhooks {
			parts = append(parts, fmt.Sprintf("%s=%d", w.Name, len(w.MatchConditions)))
		}
		for _, w := range v.Webhooks {
			parts = append(parts, fmt.Sprintf("%s=%d", w.Name, len(w.MatchConditions)))
		}
		sort.Strings(parts)
		return strings.Join(parts, " ")
	}
	// The CEL reads Pod labels: only the Ray Pod entry carries it.
	const wantConditions = "mutate.pods.ray-webhook.io=1 validate-all-pods.ray-webhook.io=0 validate.rayclusters.ray-webhook.io=0"
	if got := conditions(); got != wantConditions {
		t.Errorf("matchConditions per entry: %s, want %s", got, wantConditions)
	}
	time.Sleep(time.Second) // the API server's webhook informer
	for _, name := range []string{"chart-no-cluster-b", "chart-empty-cluster-b"} {
		labels := noCluster
		if name == "chart-empty-cluster-b" {
			labels = emptyCluster
		}
		if _, err := create(name, labels); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	// The worker after them shows the log has caught up (its review).
	p, err := create("chart-worker-b", ray)
	if err != nil || !mutated(p) {
		t.Errorf("with matchConditions, chart-worker-b: want FQ_RAY_IP on %s (err %v)", fq, err)
	}
	framework.WaitLines(t, r.Process.Log, 1, "pod=chart-worker-b ")
	for _, name := range []string{"chart-no-cluster-b", "chart-empty-cluster-b"} {
		if n := sent(name); n != 0 {
			t.Errorf("with matchConditions, %s was sent to ray-webhook %d times", name, n)
		}
	}

	// (c) with matchConditions and the replica stopped: the worker is refused
	// (failurePolicy Fail), the Pod without ray.io/cluster is created, so it
	// was never sent.
	r.Stop()
	if _, err := create("chart-worker-c", ray); err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Errorf("chart-worker-c with the server stopped: want \"failed calling webhook\", got %v", err)
	}
	if _, err := create("chart-no-cluster-c", noCluster); err != nil {
		t.Errorf("with the server stopped, chart-no-cluster-c was refused: %v", err)
	}
	t.Logf("worker FQ_RAY_IP=%s; reviews of the Pods without ray.io/cluster: %d without matchConditions, %d with",
		fq, sent("chart-no-cluster-a"), sent("chart-no-cluster-b")+sent("chart-empty-cluster-b"))
}

// chartRestoreDeploy puts back deploy/'s webhook configurations, and removes
// the chart's Deployment and PodDisruptionBudget (no controller acts on them).
func chartRestoreDeploy(t *testing.T) {
	c := framework.Attach(t)
	ctx := context.Background()
	_ = c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx, "ray-webhook", metav1.DeleteOptions{})
	_ = c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(ctx, "ray-webhook", metav1.DeleteOptions{})
	_ = c.Kube.AppsV1().Deployments("ray-webhook-system").Delete(ctx, "ray-webhook", metav1.DeleteOptions{})
	_ = c.Kube.PolicyV1().PodDisruptionBudgets("ray-webhook-system").Delete(ctx, "ray-webhook", metav1.DeleteOptions{})
	rendered, err := os.ReadFile(c.Rendered)
	if err != nil {
		t.Errorf("deploy/'s rendering: %v", err)
		return
	}
	var list struct {
		Items []map[string]any `json:"items"`
	}
	if err := yaml.Unmarshal(rendered, &list); err != nil {
		t.Errorf("deploy/'s rendering: %v", err)
		return
	}
	var docs []string
	for _, item := range list.Items {
		if k, _ := item["kind"].(string); strings.HasSuffix(k, "WebhookConfiguration") {
			b, _ := yaml.Marshal(item)
			docs = append(docs, string(b))
		}
	}
	if r := framework.Kubectl(t, strings.Join(docs, "\n---\n"), "apply", "-f", "-"); r.Err != nil {
		t.Errorf("applying deploy/'s webhook configurations again: %v\n%s", r.Err, r.Combined())
	}
	framework.RoutedTo(t, c.WebhookLog)
}

func testChartInstallUpgrade(t *testing.T) {
	c := framework.Attach(t)
	ctx := context.Background()
	const release, secret = "rw-helm", "rw-helm-ray-webhook-serving-cert"
	ns := "e2e-helm-" + randomName()
	if c.Registry == nil {
		t.Fatalf("no registry: the suite pushes the chart where the image is (E2E_IMAGE unset)")
	}
	reg := c.Registry
	repository, digest, _ := strings.Cut(reg.ImageRef, "@")
	// The package, and a second version of it, as OCI artifacts in the registry.
	first := chartVersionOf(t, chartPackage(t))
	second := nextPatch(t, first) + "-e2e"
	secondDir := filepath.Join(c.Work, "go-chart", "second")
	if _, err := chartHelm(t, "package", filepath.Join(c.Repo, "charts", "ray-webhook"), "--version", second, "--destination", secondDir); err != nil {
		t.Fatalf("%v", err)
	}
	for _, tgz := range []string{chartPackage(t), filepath.Join(secondDir, "ray-webhook-"+second+".tgz")} {
		if _, err := chartHelm(t, "push", tgz, "oci://"+reg.Host+"/charts", "--ca-file", reg.CAFile); err != nil {
			t.Fatalf("%v", err)
		}
	}
	chart := "oci://" + reg.Host + "/charts/ray-webhook"
	// Its webhooks call a Service without endpoints: Ignore, and the release goes at once.
	common := []string{"--namespace", ns, "--ca-file", reg.CAFile, "--set", "certificates.source=self-signed",
		"--set", "webhooks.mutate.failurePolicy=Ignore", "--set", "webhooks.validate.failurePolicy=Ignore",
		"--set", "image.repository=" + repository, "--set", "image.digest=" + digest}
	deployed := func(version string) *appsv1.Deployment {
		t.Helper()
		d, err := c.Kube.AppsV1().Deployments(ns).Get(ctx, "rw-helm-ray-webhook", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Deployment %s/rw-helm-ray-webhook: %v", ns, err)
		}
		if got := d.Labels["helm.sh/chart"]; got != "ray-webhook-"+version {
			t.Errorf("the Deployment is of chart %q, want ray-webhook-%s", got, version)
		}
		if got := d.Spec.Template.Spec.Containers[0].Image; got != reg.ImageRef {
			t.Errorf("the Deployment's image is %q, want %s (by digest)", got, reg.ImageRef)
		}
		return d
	}
	t.Cleanup(func() {
		_ = c.Kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	if _, err := chartHelm(t, append([]string{"install", release, chart, "--version", first, "--create-namespace"}, common...)...); err != nil {
		t.Fatalf("%v", err)
	}
	uninstalled := false
	t.Cleanup(func() {
		if !uninstalled {
			_, _ = chartHelm(t, "uninstall", release, "--namespace", ns)
		}
	})
	read := func() ([]byte, []byte, []byte) {
		s, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, secret, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Secret %s/%s: %v", ns, secret, err)
		}
		v, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "rw-helm-ray-webhook", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("ValidatingWebhookConfiguration rw-helm-ray-webhook: %v", err)
		}
		var bundle []byte
		for i, w := range v.Webhooks {
			if i > 0 && !bytes.Equal(w.ClientConfig.CABundle, bundle) {
				t.Errorf("the release's webhooks carry different caBundles")
			}
			bundle = w.ClientConfig.CABundle
		}
		return s.Data["tls.crt"], s.Data["ca.crt"], bundle
	}
	deployed(first)
	crt1, secretCA, ca1 := read()
	if len(crt1) == 0 || !bytes.Equal(ca1, secretCA) {
		t.Errorf("after install: tls.crt %d bytes; caBundle equals the Secret's ca.crt: %v", len(crt1), bytes.Equal(ca1, secretCA))
	}
	if _, err := chartHelm(t, append([]string{"upgrade", release, chart, "--version", second, "--set", "replicas=3"}, common...)...); err != nil {
		t.Fatalf("%v", err)
	}
	crt2, _, ca2 := read()
	if !bytes.Equal(crt1, crt2) || !bytes.Equal(ca1, ca2) {
		t.Errorf("helm upgrade made a new pair (%v) or caBundle (%v)", !bytes.Equal(crt1, crt2), !bytes.Equal(ca1, ca2))
	}
	if d := deployed(second); d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("helm upgrade did not apply replicas=3")
	}
	if _, err := chartHelm(t, "uninstall", release, "--namespace", ns); err != nil {
		t.Fatalf("%v", err)
	}
	uninstalled = true
	if _, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "rw-helm-ray-webhook", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the release's webhooks remain after uninstall (get: %v)", err)
	}
	t.Logf("helm install of %s %s and upgrade to %s (replicas=3), image %s, then uninstall of %s in %s: the serving pair and caBundle kept across the upgrade",
		chart, first, second, reg.ImageRef, release, ns)
}

// chartVersionOf is the version in a chart package's name (ray-webhook-VERSION.tgz).
func chartVersionOf(t *testing.T, tgz string) string {
	t.Helper()
	v, ok := strings.CutSuffix(strings.TrimPrefix(filepath.Base(tgz), "ray-webhook-"), ".tgz")
	if !ok || v == "" {
		t.Fatalf("%s is not ray-webhook-VERSION.tgz", tgz)
	}
	return v
}

// nextPatch is MAJOR.MINOR.(PATCH+1) of a MAJOR.MINOR.PATCH version.
func nextPatch(t *testing.T, v string) string {
	t.Helper()
	var major, minor, patch int
	if n, err := fmt.Sscanf(v, "%d.%d.%d", &major, &minor, &patch); n != 3 || err != nil {
		t.Fatalf("version %q is not MAJOR.MINOR.PATCH: %v", v, err)
	}
	return fmt.Sprintf("%d.%d.%d", major, minor, patch+1)
}

func lastLinesOf(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func randomName() string {
	return fmt.Sprintf("%x", time.Now().UnixNano()&0xffffff)
}
