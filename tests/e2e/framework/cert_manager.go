package framework

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// CertManagerNamespace is where cert-manager's chart installs it.
const CertManagerNamespace = "cert-manager"

// CertManager is cert-manager's controller and cainjector, running.
type CertManager struct {
	Controller, CAInjector *Process
}

// certManagerKinds are the objects of cert-manager's chart applied as they
// are. The Deployments are the two processes this starts instead (no
// container runtime here); cert-manager's own webhook does not run, so its
// Service and its two webhook configurations (failurePolicy Fail) are left
// out, as are the startup check Job, PodDisruptionBudgets and NetworkPolicies.
var certManagerKinds = map[string]bool{
	"CustomResourceDefinition": true, "ServiceAccount": true, "ConfigMap": true,
	"ClusterRole": true, "ClusterRoleBinding": true, "Role": true, "RoleBinding": true,
}

// StartCertManager installs cert-manager as its Helm chart (deploy/charts/
// cert-manager of the module tests/e2e/cert-manager pins) renders it, with
// its CRDs, and runs its controller and cainjector (BIN/cert-manager) each
// with a token of its own ServiceAccount, so the chart's RBAC is what they
// are allowed. It returns once both answer /healthz. When t ends both stop
// and the namespace and the chart's cluster-scoped RBAC go; the CRDs stay
// (the bring-up applied them for the dry runs of TestInstall and TestChart).
func StartCertManager(t testing.TB) *CertManager {
	t.Helper()
	c := Attach(t)
	bin := filepath.Join(c.Bin, "cert-manager")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("StartCertManager: %v (scripts/e2e.sh --build builds it)", err)
	}
	mod, err := moduleDir(filepath.Join(c.E2EDir, "cert-manager"), "github.com/cert-manager/cert-manager")
	if err != nil {
		t.Fatalf("StartCertManager: the module: %v", err)
	}
	rendered := certManagerRender(t, c, filepath.Join(mod, "deploy", "charts", "cert-manager"))
	file := filepath.Join(c.Work, "go-cert-manager.yaml")
	if err := os.WriteFile(file, []byte(rendered), 0o644); err != nil {
		t.Fatalf("%v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	t.Cleanup(func() { certManagerRemove(t, c, file) })
	if out, err := c.kubectl(ctx, "create", "namespace", CertManagerNamespace); err != nil && !strings.Contains(out, "AlreadyExists") {
		t.Fatalf("StartCertManager: namespace: %v: %s", err, lastLines(out, 5))
	}
	if out, err := c.kubectl(ctx, "apply", "--server-side", "--force-conflicts", "-f", file); err != nil {
		t.Fatalf("StartCertManager: applying the chart: %v\n%s", err, lastLines(out, 10))
	}
	if _, err := c.kubectl(ctx, "wait", "--for", "condition=established", "--timeout=60s", "crd/certificates.cert-manager.io",
		"crd/issuers.cert-manager.io", "crd/certificaterequests.cert-manager.io", "crd/clusterissuers.cert-manager.io"); err != nil {
		t.Fatalf("StartCertManager: CRDs not established: %v", err)
	}
	m := &CertManager{}
	for _, component := range []struct {
		name, sa string
		proc     **Process
	}{
		{"controller", "cert-manager", &m.Controller},
		{"cainjector", "cert-manager-cainjector", &m.CAInjector},
	} {
		kubeconfig := serviceAccountKubeconfig(t, c, CertManagerNamespace, component.sa)
		port := freePort(t, "127.0.0.1")
		cmd := exec.Command(bin, component.name, "--kubeconfig", kubeconfig, "--healthz-addr", "127.0.0.1:"+itoa(port))
		*component.proc = start(t, c, "cert-manager-"+component.name, cmd)
		waitHTTP(t, *component.proc, "http://127.0.0.1:"+itoa(port)+"/healthz", 90*time.Second)
	}
	t.Logf("cert-manager running: controller pid %d (log %s), cainjector pid %d (log %s)",
		m.Controller.Pid(), m.Controller.Log, m.CAInjector.Pid(), m.CAInjector.Log)
	return m
}

// certManagerRender is `helm template` of cert-manager's chart, CRDs on, with
// only certManagerKinds kept.
func certManagerRender(t testing.TB, c *Cluster, chart string) string {
	t.Helper()
	v, err := c.Kube.Discovery().ServerVersion()
	if err != nil {
		t.Fatalf("server version: %v", err)
	}
	home := filepath.Join(c.Work, "go-helm-home")
	cmd := exec.Command(filepath.Join(c.Bin, "helm"), "template", "cert-manager", chart, "--namespace", CertManagerNamespace,
		"--kube-version", v.GitVersion, "--set", "crds.enabled=true", "--set", "startupapicheck.enabled=false")
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("helm template cert-manager: %v: %s", err, lastLines(errOut.String(), 10))
	}
	var kept []string
	seen := map[string]int{}
	for _, doc := range strings.Split(out.String(), "\n---") {
		var head struct{ Kind string }
		if yaml.Unmarshal([]byte(doc), &head) != nil || head.Kind == "" {
			continue
		}
		seen[head.Kind]++
		if certManagerKinds[head.Kind] {
			kept = append(kept, strings.TrimPrefix(doc, "\n"))
		}
	}
	if seen["CustomResourceDefinition"] < 6 || seen["Deployment"] != 3 {
		t.Fatalf("cert-manager's chart rendered %v: not the chart expected (6 CRDs, 3 Deployments)", seen)
	}
	return strings.Join(kept, "\n---\n")
}

// serviceAccountKubeconfig writes a kubeconfig for the API server with a
// 2-hour token of ServiceAccount NS/NAME.
func serviceAccountKubeconfig(t testing.TB, c *Cluster, ns, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	token, err := c.kubectl(ctx, "create", "token", name, "-n", ns, "--duration=2h")
	if err != nil {
		t.Fatalf("a token of %s/%s: %v: %s", ns, name, err, lastLines(token, 5))
	}
	file := filepath.Join(c.Work, "go-kubeconfig-"+ns+"-"+name)
	body := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: %s
    certificate-authority: %s
users:
- name: %s
  user:
    token: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: %s, namespace: %s}
current-context: e2e
`, c.APIServer, filepath.Join(c.PKI, "ca.crt"), name, strings.TrimSpace(token), name, ns)
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatalf("%v", err)
	}
	return file
}

func certManagerRemove(t testing.TB, c *Cluster, file string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := os.ReadFile(file)
	if err != nil {
		return
	}
	var rest []string
	for _, doc := range strings.Split(string(b), "\n---\n") {
		if !strings.Contains(doc, "kind: CustomResourceDefinition") {
			rest = append(rest, doc)
		}
	}
	cmd := exec.CommandContext(ctx, c.Kubectl, "delete", "--ignore-not-found", "--wait=false", "-f", "-")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+c.Kubeconfig)
	cmd.Stdin = strings.NewReader(strings.Join(rest, "\n---\n"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("removing cert-manager's RBAC: %v: %s", err, lastLines(string(out), 5))
	}
	if err := c.Kube.CoreV1().Namespaces().Delete(ctx, CertManagerNamespace, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting namespace %s: %v", CertManagerNamespace, err)
	}
}

// FollowSecret keeps volume DIR the content of Secret NS/NAME as the kubelet
// keeps a Secret volume (volume.go's atomic writes): each change is written
// within a second (the kubelet's own delay, its sync period plus its cache's
// TTL, is up to about a minute; only the moment differs). A deleted Secret
// leaves the files as they are, as the kubelet does. When t ends it stops
// and DIR gets back the content it had.
func FollowSecret(t testing.TB, dir, ns, name string) {
	t.Helper()
	c := Attach(t)
	before, err := readVolume(dir)
	if err != nil {
		t.Fatalf("volume %s: %v", dir, err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		version := ""
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			s, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
			cancel()
			if err == nil && s.ResourceVersion != version && len(s.Data["tls.crt"]) > 0 {
				if werr := writeVolume(dir, s.Data, c.volumeOwner()); werr != nil {
					t.Errorf("writing Secret %s/%s into %s: %v", ns, name, dir, werr)
				} else {
					version = s.ResourceVersion
				}
			}
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
			}
		}
	}()
	t.Cleanup(func() {
		close(stop)
		wg.Wait()
		if err := writeVolume(dir, before, c.volumeOwner()); err != nil {
			t.Errorf("restoring volume %s: %v", dir, err)
		}
	})
}
