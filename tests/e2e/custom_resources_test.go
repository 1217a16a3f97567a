package e2e

// TestCustomResources: RayCluster, RayJob and RayService admission. deploy/'s
// validate.rayclusters.ray-webhook.io entry sends them to /validate, where they
// are checked against the Pods KubeRay v1.6.2 would build from their
// templates. Each check in its own namespace, one operator for all.
//
//	token-dupmount-refused     (23a) kubectl apply of a RayCluster whose worker mounts its own token at
//	                           KubeRay's ray-token path under another name: refused under the shipped
//	                           flags, naming the field path, both volumes and the cause; nothing stored
//	owners-shm-dupmount        (23c) a RayJob and a RayService whose embedded cluster's worker mounts
//	                           "/dev/shm/": both refused at their embedded spec's path; neither stored
//	token-dupmount-warn        (23b) the same apply with a --duplicate-mount-mode=warn replica: stored,
//	                           kubectl prints the warning with the field path, the replica logged the
//	                           review; the operator stores the head and kube-apiserver's own Pod
//	                           validation refuses every worker (mountPath must be unique): what the
//	                           denial of 23a saves the user from
//	update-judged-on-additions (23d) a RayCluster stored in warn mode, then the shipped flags: a label
//	                           UPDATE is admitted despite the finding it already had; a patch adding a
//	                           duplicate to the head is refused naming only the new one; both UPDATEs
//	                           reached ray-webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"ray-webhook/tests/e2e/framework"
)

const (
	resourcesTokenFixture   = "testdata/resources-rc-token-dupmount.yaml"
	resourcesJobFixture     = "testdata/resources-rayjob-shm-dupmount.yaml"
	resourcesServiceFixture = "testdata/resources-rayservice-shm-dupmount.yaml"

	resourcesDenied   = `admission webhook "validate.rayclusters.ray-webhook.io" denied the request`
	resourcesTokPath  = "spec.workerGroupSpecs[0].template.spec.containers[0].volumeMounts[0]"
	resourcesTokDup   = `container "ray-worker" would mount "/var/run/secrets/ray.io/serviceaccount" 2 times (volumes "my-token", "ray-token" added by KubeRay)`
	resourcesShmDup   = `container "ray-worker" would mount "/dev/shm" 2 times (volumes "dshm", "shared-mem" added by KubeRay)`
	resourcesTokCause = "name your mount ray-token"
)

var (
	resourcesRayJobs     = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}
	resourcesRayServices = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayservices"}
	// kube-apiserver's ValidateVolumeMounts: a mountPath is unique within a container.
	resourcesUnique = regexp.MustCompile(`volumeMounts\[[0-9]+\]\.mountPath: Invalid value: \\*"/var/run/secrets/ray\.io/serviceaccount\\*": must be unique`)
)

func TestCustomResources(t *testing.T) {
	framework.Attach(t)
	framework.Operator(t, releaseCurrent)
	t.Run("token-dupmount-refused", resourcesTestTokenRefused)
	t.Run("owners-shm-dupmount", resourcesTestOwners)
	t.Run("token-dupmount-warn", resourcesTestTokenWarn)
	t.Run("update-judged-on-additions", resourcesTestUpdate)
}

// resourcesJSON is the objects as kubectl's stdin: one object, or a List.
func resourcesJSON(t testing.TB, objs ...*unstructured.Unstructured) string {
	t.Helper()
	var v any = objs[0].Object
	if len(objs) > 1 {
		items := make([]any, len(objs))
		for i, o := range objs {
			items[i] = o.Object
		}
		v = map[string]any{"apiVersion": "v1", "kind": "List", "items": items}
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return string(b)
}

// resourcesAbsent fails t unless NS/NAME of GVR is not stored.
func resourcesAbsent(t testing.TB, gvr schema.GroupVersionResource, ns, name string) {
	t.Helper()
	c := framework.Attach(t)
	_, err := c.Dynamic.Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("%s %s/%s: want NotFound (not stored), got err=%v", gvr.Resource, ns, name, err)
	}
}

// resourcesReviews counts the shipped or a replica's review lines of object NS/NAME at /validate.
func resourcesReviews(log, ns, name string) int {
	return framework.CountLines(log, "path=/validate ", " namespace="+ns+" ", " pod="+name+" ")
}

func resourcesTestTokenRefused(t *testing.T) {
	ns := framework.NewNamespace(t, "resources")
	const name = "rc-token-dupmount"
	obj := framework.Manifest(t, resourcesTokenFixture, map[string]string{"NAME": name})
	out := framework.Kubectl(t, resourcesJSON(t, obj), "-n", ns, "apply", "-f", "-")
	t.Logf("kubectl apply:\n%s", out.Combined())
	if out.Err == nil {
		t.Errorf("kubectl apply exited 0, want a refusal")
	}
	for _, want := range []string{
		resourcesDenied + `: RayCluster "` + name + `"`,
		"(" + resourcesTokPath + "): " + resourcesTokDup,
		resourcesTokCause,
	} {
		if !strings.Contains(out.Combined(), want) {
			t.Errorf("kubectl apply does not print %q", want)
		}
	}
	resourcesAbsent(t, rayClustersV1, ns, name)
}

func resourcesTestOwners(t *testing.T) {
	ns := framework.NewNamespace(t, "resources")
	job := framework.Manifest(t, resourcesJobFixture, nil)
	svc := framework.Manifest(t, resourcesServiceFixture, nil)
	out := framework.Kubectl(t, resourcesJSON(t, job, svc), "-n", ns, "apply", "-f", "-")
	t.Logf("kubectl apply:\n%s", out.Combined())
	lineOf := func(prefix string) string {
		for _, l := range strings.Split(out.Combined(), "\n") {
			if strings.Contains(l, prefix) {
				return l
			}
		}
		return ""
	}
	jobLine := lineOf(resourcesDenied + `: RayJob "job-shm-dupmount"`)
	svcLine := lineOf(resourcesDenied + `: RayService "service-shm-dupmount"`)
	if want := "(spec.rayClusterSpec.workerGroupSpecs[0].template.spec.containers[0].volumeMounts[0]): " + resourcesShmDup; !strings.Contains(jobLine, want) {
		t.Errorf("the RayJob's refusal %q does not name %q", jobLine, want)
	}
	if want := "(spec.rayClusterConfig.workerGroupSpecs[0].template.spec.containers[0].volumeMounts[0]): " + resourcesShmDup; !strings.Contains(svcLine, want) {
		t.Errorf("the RayService's refusal %q does not name %q", svcLine, want)
	}
	resourcesAbsent(t, resourcesRayJobs, ns, "job-shm-dupmount")
	resourcesAbsent(t, resourcesRayServices, ns, "service-shm-dupmount")
}

func resourcesTestTokenWarn(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "resources")
	const name = "rc-token-dupmount"
	r := framework.WebhookReplica(t, []string{"--duplicate-mount-mode=warn"}, nil)
	obj := framework.Manifest(t, resourcesTokenFixture, map[string]string{"NAME": name})
	out := framework.Kubectl(t, resourcesJSON(t, obj), "-n", ns, "apply", "-f", "-")
	t.Logf("kubectl apply:\n%s", out.Combined())
	if out.Err != nil {
		t.Fatalf("kubectl apply under warn mode: %v", out.Err)
	}
	lines := strings.Split(out.Combined(), "\n")
	has := func(want string) bool {
		for _, l := range lines {
			if strings.TrimSpace(l) == want {
				return true
			}
		}
		return false
	}
	for _, want := range []string{
		"raycluster.ray.io/" + name + " created",
		"Warning: duplicate-mount (warn mode): " + resourcesTokPath + ": " + resourcesTokDup,
	} {
		if !has(want) {
			t.Errorf("kubectl apply does not print the line %q", want)
		}
	}
	framework.WaitLines(t, r.Process.Log, 1, "path=/validate ", " namespace="+ns+" ", " pod="+name+" ")

	// The operator stores the head; each worker it builds mounts the token
	// path twice, and kube-apiserver's own validation refuses it. KubeRay
	// reports that as a FailedToCreateWorkerPod Event carrying the API
	// server's error.
	var refusal string
	framework.Eventually(t, 90*time.Second, time.Second, func() (bool, string) {
		evs, err := c.Kube.CoreV1().Events(ns).List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=RayCluster,involvedObject.name=" + name})
		if err != nil {
			return false, fmt.Sprintf("listing Events: %v", err)
		}
		var seen []string
		for _, e := range evs.Items {
			if e.Type == corev1.EventTypeWarning && e.Reason == "FailedToCreateWorkerPod" &&
				strings.Contains(e.Message, name+"-workers-worker") && resourcesUnique.MatchString(e.Message) {
				refusal = e.Message
				return true, ""
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return false, fmt.Sprintf("no FailedToCreateWorkerPod Event saying the mountPath must be unique; Events: %q", seen)
	})
	t.Logf("the operator's refused worker: %s", refusal)
	framework.Eventually(t, 60*time.Second, time.Second, func() (bool, string) {
		heads := rayPods(t, ns, name, "head")
		return len(heads) == 1, fmt.Sprintf("%d head Pods stored, want 1", len(heads))
	})
	if ws := rayPods(t, ns, name, "worker"); len(ws) != 0 {
		t.Errorf("%d worker Pods stored (%s...), want none: kube-apiserver should refuse them", len(ws), ws[0].Name)
	}
}

func resourcesTestUpdate(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "resources")
	const name = "rc-token-dupmount"
	// Stored while a warn-mode replica serves, so the stored template already
	// has the finding; the replica is gone (the shipped flags serve) when
	// this nested test ends.
	t.Run("stored-in-warn-mode", func(t *testing.T) {
		r := framework.WebhookReplica(t, []string{"--duplicate-mount-mode=warn"}, nil)
		createCluster(t, ns, resourcesTokenFixture, name, nil)
		framework.WaitLines(t, r.Process.Log, 1, "path=/validate ", " namespace="+ns+" ", " pod="+name+" ")
	})
	if t.Failed() {
		return
	}

	reviews0 := resourcesReviews(c.WebhookLog, ns, name)
	upd := framework.Kubectl(t, "", "-n", ns, "label", "raycluster.ray.io", name, "e2e.ray-webhook.io/updated=yes")
	t.Logf("kubectl label:\n%s", upd.Combined())
	if upd.Err != nil || strings.TrimSpace(upd.Stdout) != "raycluster.ray.io/"+name+" labeled" {
		t.Errorf("kubectl label (an UPDATE adding no finding) not admitted: %v", upd.Err)
	}
	patch := `[
    {"op": "add", "path": "/spec/headGroupSpec/template/spec/volumes", "value": [{"name": "dshm", "emptyDir": {"medium": "Memory"}}]},
    {"op": "add", "path": "/spec/headGroupSpec/template/spec/containers/0/volumeMounts", "value": [{"name": "dshm", "mountPath": "/dev/shm/"}]}]`
	neu := framework.Kubectl(t, "", "-n", ns, "patch", "raycluster.ray.io", name, "--type=json", "-p", patch)
	t.Logf("kubectl patch:\n%s", neu.Combined())
	if neu.Err == nil {
		t.Errorf("kubectl patch adding a duplicate mount to the head exited 0, want a refusal")
	}
	for _, want := range []string{
		resourcesDenied + `: RayCluster "` + name + `"`,
		`(spec.headGroupSpec.template.spec.containers[0].volumeMounts[0]): container "ray-head" would mount "/dev/shm" 2 times`,
	} {
		if !strings.Contains(neu.Combined(), want) {
			t.Errorf("kubectl patch does not print %q", want)
		}
	}
	if strings.Contains(neu.Combined(), resourcesTokPath) {
		t.Errorf("kubectl patch names the old finding %s; an UPDATE is judged on what it adds", resourcesTokPath)
	}
	// Both UPDATEs reached the shipped replica.
	framework.WaitLines(t, c.WebhookLog, reviews0+2, "path=/validate ", " namespace="+ns+" ", " pod="+name+" ")
	rc, err := c.Dynamic.Resource(rayClustersV1).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("getting RayCluster %s/%s: %v", ns, name, err)
	}
	if l := rc.GetLabels()["e2e.ray-webhook.io/updated"]; l != "yes" {
		t.Errorf("label e2e.ray-webhook.io/updated = %q, want yes (stored)", l)
	}
	containers, _, _ := unstructured.NestedSlice(rc.Object, "spec", "headGroupSpec", "template", "spec", "containers")
	if len(containers) == 0 {
		t.Fatalf("RayCluster %s/%s has no head container", ns, name)
	}
	if m, found, _ := unstructured.NestedSlice(containers[0].(map[string]any), "volumeMounts"); found {
		t.Errorf("the head container has volumeMounts %v stored, want none (the patch was refused)", m)
	}
}
