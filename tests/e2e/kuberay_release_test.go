// TestKubeRayRelease: `--kuberay-version auto` on the whole cluster. A
// replica routed alone reads the KubeRay operator's Deployment (KubeRay
// v1.6.2's own config/manager/manager.yaml, as kustomize installs it) from
// kube-apiserver over a watch, with deploy/'s RBAC, and judges RayClusters
// applied through kube-apiserver by the release and feature gates it finds:
//
//	no Deployment            the fixed release (1.6.2, default gates): both objects allowed
//	v1.6.2, gate off         RayJobDeletionPolicy=false in its args: a worker group's suspend refused
//	upgraded to v1.7.0       the image changed in place: 1.7.0's autoscaler-start-command-env refuses
//	a second operator        of another release: ambiguous, back to the fixed release
//	a tag that is no release `latest`: the fixed release
//
// Each step is asserted on kube-apiserver's answer to a server-side dry-run,
// on the replica's /readyz detail and on ray_webhook_kuberay_release_info.
package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"ray-webhook/tests/e2e/framework"
)

var deploymentsGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// A worker group suspended: refused by KubeRay when RayJobDeletionPolicy is off (worker-suspend-gate).
const releaseSuspendedWorkers = `{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"suspended-workers"},
"spec":{"headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":[{"name":"ray-head","image":"rayproject/ray:2.52.0"}]}}},
"workerGroupSpecs":[{"groupName":"small","replicas":1,"minReplicas":1,"maxReplicas":1,"suspend":true,"rayStartParams":{},
"template":{"spec":{"containers":[{"name":"ray-worker","image":"rayproject/ray:2.52.0"}]}}}]}}`

// The autoscaler's start command set by env: refused from KubeRay 1.7.0 on (autoscaler-start-command-env).
const releaseAutoscalerCommand = `{"apiVersion":"ray.io/v1","kind":"RayCluster","metadata":{"name":"autoscaler-command"},
"spec":{"enableInTreeAutoscaling":true,"autoscalerOptions":{"env":[{"name":"KUBERAY_GEN_AUTOSCALER_START_CMD","value":"ray kuberay-autoscaler"}]},
"headGroupSpec":{"rayStartParams":{},"template":{"spec":{"containers":[{"name":"ray-head","image":"rayproject/ray:2.52.0"}]}}}}}`

func TestKubeRayRelease(t *testing.T) {
	c := framework.Attach(t)
	framework.Operator(t, releaseCurrent) // its CRDs: RayClusters can be applied
	ns := framework.NewNamespace(t, "release")
	r := framework.StartReplica(t, framework.ReplicaOptions{Name: "ray-webhook-release",
		Args: []string{"--kuberay-version=auto", "--kuberay-operator-namespace=" + ns}})

	expect := func(step, wantReady, wantSource, wantVersion string, suspendRefused, autoscalerRefused bool) {
		t.Helper()
		framework.Eventually(t, 30*time.Second, 200*time.Millisecond, func() (bool, string) {
			body, err := releaseReadyz(r.IP, r.ProbePort)
			return err == nil && strings.Contains(body, wantReady), "/readyz: " + body + releaseErr(err)
		})
		scrape, err := framework.ReplicaMetrics(context.Background(), c, r.IP, r.Port)
		if err != nil {
			t.Fatalf("%s: the replica's /metrics: %v", step, err)
		}
		if got := scrape.Sum("ray_webhook_kuberay_release_info", map[string]string{"source": wantSource, "version": wantVersion}); got != 1 {
			t.Errorf("%s: ray_webhook_kuberay_release_info{source=%q,version=%q} = %v, want 1 (series: %v)", step, wantSource,
				wantVersion, got, scrape.By("ray_webhook_kuberay_release_info", "source", nil))
		}
		releaseApply(t, step, ns, releaseSuspendedWorkers, suspendRefused, "spec.workerGroupSpecs[0].suspend")
		releaseApply(t, step, ns, releaseAutoscalerCommand, autoscalerRefused, "spec.autoscalerOptions.env[0]")
	}

	expect("no operator", "no KubeRay operator Deployment found; judging by the fixed release 1.6.2", "no_operator",
		"1.6.2", false, false)

	releaseCreate(t, c, ns, releaseOperatorDeployment(t, ns, "kuberay-operator", "quay.io/kuberay/operator:v1.6.2"))
	expect("v1.6.2 with RayJobDeletionPolicy=false", "KubeRay 1.6.2 from Deployment "+ns+"/kuberay-operator", "operator",
		"1.6.2", true, false)

	releaseSetImage(t, c, ns, "kuberay-operator", "quay.io/kuberay/operator:v1.7.0")
	expect("upgraded to v1.7.0", "KubeRay 1.7.0 from Deployment "+ns+"/kuberay-operator", "operator", "1.7.0", true, true)

	second := releaseCreate(t, c, ns, releaseOperatorDeployment(t, ns, "kuberay-operator-b", "quay.io/kuberay/operator:v1.6.2"))
	expect("a second operator of another release", "two KubeRay operators disagree", "ambiguous", "1.6.2", false, false)

	if err := c.Dynamic.Resource(deploymentsGVR).Namespace(ns).Delete(context.Background(), second.GetName(),
		metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the second operator: %v", err)
	}
	expect("the second operator deleted", "KubeRay 1.7.0 from Deployment "+ns+"/kuberay-operator", "operator", "1.7.0",
		true, true)

	releaseSetImage(t, c, ns, "kuberay-operator", "quay.io/kuberay/operator:latest")
	expect("a tag that is no release", `runs image "quay.io/kuberay/operator:latest", whose tag names no KubeRay release`,
		"not_a_release", "1.6.2", false, false)
}

// releaseOperatorDeployment is KubeRay v1.6.2's manager Deployment as its
// kustomize manifests make it, in ns under name, running image with
// --feature-gates=RayJobDeletionPolicy=false.
func releaseOperatorDeployment(t *testing.T, ns, name, image string) *unstructured.Unstructured {
	t.Helper()
	file := filepath.Join(framework.OperatorModuleDir(t, releaseCurrent), "config", "manager", "manager.yaml")
	for _, doc := range framework.Documents(t, file) {
		if doc["kind"] != "Deployment" {
			continue
		}
		d := &unstructured.Unstructured{Object: doc}
		d.SetNamespace(ns)
		d.SetName(name)
		// ray-operator/config/default/kustomization.yaml's labels, on the Deployment, its selector and template.
		labels := map[string]string{"app.kubernetes.io/name": "kuberay", "app.kubernetes.io/component": "kuberay-operator",
			"app.kubernetes.io/instance": name}
		d.SetLabels(labels)
		must(t, unstructured.SetNestedStringMap(d.Object, labels, "spec", "selector", "matchLabels"))
		must(t, unstructured.SetNestedStringMap(d.Object, labels, "spec", "template", "metadata", "labels"))
		must(t, unstructured.SetNestedField(d.Object, int64(0), "spec", "replicas"))
		containers, _, err := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
		if err != nil || len(containers) == 0 {
			t.Fatalf("%s: no containers (%v)", file, err)
		}
		container := containers[0].(map[string]any)
		if container["name"] != "kuberay-operator" {
			t.Fatalf("%s: the first container is %v, want kuberay-operator", file, container["name"])
		}
		container["image"] = image
		container["args"] = []any{"--feature-gates=RayJobDeletionPolicy=false"}
		must(t, unstructured.SetNestedSlice(d.Object, containers, "spec", "template", "spec", "containers"))
		return d
	}
	t.Fatalf("%s: no Deployment", file)
	return nil
}

// releaseCreate creates d with one replica (a Deployment scaled to 0 runs
// nothing, and ChooseKubeRayRelease does not count it).
func releaseCreate(t *testing.T, c *framework.Cluster, ns string, d *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	must(t, unstructured.SetNestedField(d.Object, int64(1), "spec", "replicas"))
	created, err := c.Dynamic.Resource(deploymentsGVR).Namespace(ns).Create(context.Background(), d, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating Deployment %s/%s: %v", ns, d.GetName(), err)
	}
	return created
}

// releaseSetImage changes the operator container's image in place, as an upgrade of the operator does.
func releaseSetImage(t *testing.T, c *framework.Cluster, ns, name, image string) {
	t.Helper()
	patch := `{"spec":{"template":{"spec":{"containers":[{"name":"kuberay-operator","image":"` + image + `"}]}}}}`
	if _, err := c.Dynamic.Resource(deploymentsGVR).Namespace(ns).Patch(context.Background(), name,
		"application/strategic-merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("setting the image of %s/%s: %v", ns, name, err)
	}
}

// releaseApply applies object with a server-side dry run through kube-apiserver (and so the replica's
// /validate), and checks that it is refused naming field, or allowed.
func releaseApply(t *testing.T, step, ns, object string, refused bool, field string) {
	t.Helper()
	out := framework.Kubectl(t, object, "-n", ns, "apply", "--dry-run=server", "-f", "-")
	switch {
	case refused && out.Err == nil:
		t.Errorf("%s: kubectl apply of %s was allowed, want it refused at %s:\n%s", step, field, field, out.Combined())
	case refused && !strings.Contains(out.Combined(), field):
		t.Errorf("%s: the refusal does not name %s:\n%s", step, field, out.Combined())
	case !refused && out.Err != nil:
		t.Errorf("%s: kubectl apply refused the object with %s, want it allowed:\n%s", step, field, out.Combined())
	}
}

func releaseReadyz(ip string, port int) (string, error) {
	client := &http.Client{Timeout: 5 * time.Second}
	resp, err := client.Get("http://" + net.JoinHostPort(ip, strconv.Itoa(port)) + "/readyz")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

func releaseErr(err error) string {
	if err == nil {
		return ""
	}
	return " (" + err.Error() + ")"
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
