package e2e

// TestInstall: deploy/ as shipped, on the real API server (old check 1), and
// what the API server does when ray-webhook is down (old check 7).
//
//	deploy-applies     both overlays pass `kubectl apply --dry-run=server`; the Namespace, RBAC,
//	                   Service and both webhook configurations are stored, every webhook carries the
//	                   throw-away CA as caBundle and clientConfig.service ray-webhook; a non-Ray Pod
//	                   in a namespace labelled ray-webhook.io/validate-all-pods=true reaches
//	                   ray-webhook through the Service (its review line)
//	webhook-down       ray-webhook stopped (SIGTERM; it drains and exits): a Ray Pod is refused
//	                   (failurePolicy Fail: "failed calling webhook", nothing stored); a non-Ray Pod
//	                   and a Ray-labelled Pod in kube-system are created (the selectors leave them out)

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ray-webhook/tests/e2e/framework"
)

const installNamespace = "ray-webhook-system"

func TestInstall(t *testing.T) {
	framework.Attach(t)
	t.Run("deploy-applies", testInstallDeployApplies)
	t.Run("webhook-down", testInstallWebhookDown)
}

func testInstallDeployApplies(t *testing.T) {
	c := framework.Attach(t)
	ctx := context.Background()
	for _, overlay := range []string{"static-certs", "cert-manager"} {
		r := framework.Kubectl(t, "", "apply", "--dry-run=server", "-f", filepath.Join(c.Work, "rendered-"+overlay+".yaml"))
		if r.Err != nil {
			t.Errorf("overlay %s: kubectl apply --dry-run=server: %v\n%s", overlay, r.Err, r.Combined())
		}
	}
	if _, err := c.Kube.CoreV1().Namespaces().Get(ctx, installNamespace, metav1.GetOptions{}); err != nil {
		t.Errorf("namespace %s: %v", installNamespace, err)
	}
	if _, err := c.Kube.RbacV1().ClusterRoles().Get(ctx, "ray-webhook", metav1.GetOptions{}); err != nil {
		t.Errorf("ClusterRole ray-webhook: %v", err)
	}
	if _, err := c.Kube.RbacV1().ClusterRoleBindings().Get(ctx, "ray-webhook", metav1.GetOptions{}); err != nil {
		t.Errorf("ClusterRoleBinding ray-webhook: %v", err)
	}
	if _, err := c.Kube.CoreV1().ServiceAccounts(installNamespace).Get(ctx, "ray-webhook", metav1.GetOptions{}); err != nil {
		t.Errorf("ServiceAccount ray-webhook: %v", err)
	}
	if _, err := c.Kube.CoreV1().Services(installNamespace).Get(ctx, "ray-webhook", metav1.GetOptions{}); err != nil {
		t.Errorf("Service ray-webhook: %v", err)
	}

	ca, err := os.ReadFile(filepath.Join(c.WebhookCerts, "ca.crt"))
	if err != nil {
		t.Fatalf("the generated CA: %v", err)
	}
	type entry struct {
		name     string
		caBundle []byte
		service  string
	}
	var entries []entry
	mutating, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "ray-webhook", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("MutatingWebhookConfiguration ray-webhook: %v", err)
	}
	for _, w := range mutating.Webhooks {
		e := entry{name: "mutating " + w.Name, caBundle: w.ClientConfig.CABundle}
		if w.ClientConfig.Service != nil {
			e.service = w.ClientConfig.Service.Namespace + "/" + w.ClientConfig.Service.Name
		}
		entries = append(entries, e)
	}
	validating, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "ray-webhook", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("ValidatingWebhookConfiguration ray-webhook: %v", err)
	}
	for _, w := range validating.Webhooks {
		e := entry{name: "validating " + w.Name, caBundle: w.ClientConfig.CABundle}
		if w.ClientConfig.Service != nil {
			e.service = w.ClientConfig.Service.Namespace + "/" + w.ClientConfig.Service.Name
		}
		entries = append(entries, e)
	}
	if len(mutating.Webhooks) == 0 || len(validating.Webhooks) == 0 {
		t.Errorf("configurations hold %d mutating and %d validating webhooks", len(mutating.Webhooks), len(validating.Webhooks))
	}
	for _, e := range entries {
		if !bytes.Equal(e.caBundle, ca) {
			t.Errorf("%s: caBundle is not the generated CA (%s...)", e.name, truncate(base64.StdEncoding.EncodeToString(e.caBundle), 40))
		}
		if e.service != installNamespace+"/ray-webhook" {
			t.Errorf("%s: clientConfig.service is %q, want %s/ray-webhook", e.name, e.service, installNamespace)
		}
	}

	// The route through the Service: validate-all-pods has failurePolicy
	// Ignore, so only ray-webhook's own review line shows the call arrived.
	ns := framework.NewNamespace(t, "e2e-install")
	nsObj, err := c.Kube.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("namespace %s: %v", ns, err)
	}
	nsObj.Labels["ray-webhook.io/validate-all-pods"] = "true"
	if _, err := c.Kube.CoreV1().Namespaces().Update(ctx, nsObj, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("labelling namespace %s: %v", ns, err)
	}
	pod := installPod("routed-probe", nil)
	if _, err := c.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a plain Pod in %s: %v", ns, err)
	}
	framework.WaitLines(t, c.WebhookLog, 1, "path=/validate ", "namespace="+ns+" ", "pod=routed-probe ")
	t.Logf("%s", firstLine(framework.Lines(c.WebhookLog, "path=/validate ", "namespace="+ns+" ", "pod=routed-probe ")))
}

func testInstallWebhookDown(t *testing.T) {
	c := framework.Attach(t)
	ctx := context.Background()
	ns := framework.NewNamespace(t, "e2e-down")
	// A replica the Service routes to alone, then stopped: the shipped one
	// keeps running for the tests after this one.
	r := framework.WebhookReplica(t, nil, nil)
	r.Stop()
	if !r.Process.Exited() {
		t.Fatalf("the replica did not exit after SIGTERM")
	}

	rayLabels := map[string]string{"ray.io/cluster": "down", "ray.io/node-type": "worker", "ray.io/group": "workers"}
	_, err := c.Kube.CoreV1().Pods(ns).Create(ctx, installPod("down-ray-worker", rayLabels), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "failed calling webhook") {
		t.Errorf("a Ray Pod with ray-webhook down: want \"failed calling webhook\" (failurePolicy Fail), got %v", err)
	} else {
		t.Logf("API server: %s", truncate(err.Error(), 300))
	}
	if _, err := c.Kube.CoreV1().Pods(ns).Get(ctx, "down-ray-worker", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused Ray Pod is stored (get: %v)", err)
	}
	if _, err := c.Kube.CoreV1().Pods(ns).Create(ctx, installPod("down-plain", nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("a non-Ray Pod with ray-webhook down: %v", err)
	}
	// kube-system is outside every ray-webhook selector, Ray labels or not.
	name := "down-system-ray-worker-" + strings.TrimPrefix(ns, "e2e-down-")
	if _, err := c.Kube.CoreV1().Pods("kube-system").Create(ctx, installPod(name, rayLabels), metav1.CreateOptions{}); err != nil {
		t.Errorf("a Ray Pod in kube-system with ray-webhook down: %v", err)
	} else {
		t.Cleanup(func() {
			_ = c.Kube.CoreV1().Pods("kube-system").Delete(context.Background(), name, metav1.DeleteOptions{})
		})
	}
}

// installPod is a one-container Pod with LABELS that never runs (no toleration
// of the KWOK node).
func installPod(name string, labels map[string]string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: "main", Image: "registry.k8s.io/pause:3.10",
		}}},
	}
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func firstLine(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return lines[0]
}
