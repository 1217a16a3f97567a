package e2e

// TestSettledWorkers: the chart's and deploy/examples' settled-worker condition
// (charts/ray-webhook/files/settled-worker.cel) as kube-apiserver evaluates it.
//
//	condition   (26) a mutating configuration named to run before ray-webhook's, with the shipped
//	            selectors, the condition, failurePolicy Fail and a URL nothing answers: a dry-run
//	            create fails "failed calling webhook" exactly when the API server would call.
//	            Every Ray Pod of tests/fixtures/reviews to which `ray-webhook review --admit`
//	            answers anything (a patch, a refusal, a warning) must be called; KubeRay 1.6 and
//	            1.7 workers that need nothing must not be
//	bench-workers  the two Pods bench/apiserver.sh creates (cmd/podload -print-pod): the default
//	            worker (KubeRay before 0.5) gets ray-webhook's patch and is sent; the -settled one
//	            (KubeRay 1.x) gets no patch, no warning, and is not sent, so the bench's
//	            "settled" rows measure a Pod that needs nothing

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"ray-webhook/tests/e2e/framework"
)

// settledOracle names the stand-in webhook: a name in an error means the API server called it.
const settledOracle = "oracle.settled.e2e.ray-webhook.io"

// settledFixtures are KubeRay-built workers that need nothing from ray-webhook: the condition's point.
var settledFixtures = []string{"kuberay-1.6-worker-token-k8s.json", "kuberay-1.7-worker.json", "kuberay-1.0-worker.json"}

func TestSettledWorkers(t *testing.T) {
	framework.Attach(t)
	t.Run("condition", settledWorkersCondition)
	t.Run("bench-workers", settledBenchWorkers)
}

// settledReview is what the check reads of a fixture and of ray-webhook's answer.
type settledReview struct {
	Request struct {
		Operation string `json:"operation"`
		Kind      struct {
			Kind string `json:"kind"`
		} `json:"kind"`
		Object map[string]any `json:"object"`
	} `json:"request"`
	Response struct {
		Allowed  bool     `json:"allowed"`
		Patch    string   `json:"patch"`
		Warnings []string `json:"warnings"`
	} `json:"response"`
}

// admitAnswer is `ray-webhook review --admit` of review (named what in a failure).
func admitAnswer(t *testing.T, c *framework.Cluster, what string, review []byte) settledReview {
	t.Helper()
	cmd := exec.Command(c.RayWebhook, "review", "--admit", "--cluster-domain", c.ClusterDomain, "-")
	cmd.Stdin = bytes.NewReader(review)
	out, err := cmd.Output()
	var answer settledReview
	if err != nil || json.Unmarshal(out, &answer) != nil {
		t.Fatalf("ray-webhook review --admit of %s: %v: %s", what, err, out)
	}
	return answer
}

// settledOracleFor registers, in namespace ns, a mutating configuration named to run before
// ray-webhook's, with the shipped selectors, the condition, and a URL nothing answers, and returns
// a function that dry-runs a Pod's creation and says whether the API server called it.
func settledOracleFor(t *testing.T, c *framework.Cluster, ns string) func(object map[string]any) (bool, string) {
	ctx := context.Background()
	expression, err := os.ReadFile(filepath.Join(c.Repo, "charts/ray-webhook/files/settled-worker.cel"))
	if err != nil {
		t.Fatalf("%v", err)
	}
	fail := admissionregistrationv1.Fail
	none := admissionregistrationv1.SideEffectClassNone
	timeout := int32(1)
	url := "https://127.0.0.1:1/never-answered"
	// Configurations are called in the order of their names: "a-..." before "ray-webhook", so the
	// condition sees each Pod as created, before ray-webhook's patch.
	config := &admissionregistrationv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "a-settled-oracle-" + ns},
		Webhooks: []admissionregistrationv1.MutatingWebhook{{
			Name:                    settledOracle,
			ClientConfig:            admissionregistrationv1.WebhookClientConfig{URL: &url},
			AdmissionReviewVersions: []string{"v1"},
			SideEffects:             &none,
			FailurePolicy:           &fail,
			TimeoutSeconds:          &timeout,
			Rules: []admissionregistrationv1.RuleWithOperations{{
				Operations: []admissionregistrationv1.OperationType{admissionregistrationv1.Create},
				Rule: admissionregistrationv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"},
					Resources: []string{"pods"}},
			}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": ns}},
			ObjectSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
				Key: "ray.io/node-type", Operator: metav1.LabelSelectorOpIn, Values: []string{"head", "worker"},
			}}},
			MatchConditions: []admissionregistrationv1.MatchCondition{{
				Name: "not-a-settled-worker", Expression: strings.TrimSpace(string(expression)),
			}},
		}},
	}
	hooks := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations()
	if _, err := hooks.Create(ctx, config, metav1.CreateOptions{}); err != nil {
		t.Fatalf("the API server refuses the condition: %v", err)
	}
	t.Cleanup(func() { _ = hooks.Delete(context.Background(), config.Name, metav1.DeleteOptions{}) })

	pods := c.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "pods"}).Namespace(ns)
	accounts := c.Kube.CoreV1().ServiceAccounts(ns)
	called := func(object map[string]any) (bool, string) {
		pod := &unstructured.Unstructured{Object: object}
		pod.SetNamespace(ns)
		pod.SetResourceVersion("")
		pod.SetUID("")
		if pod.GetName() == "" && pod.GetGenerateName() == "" {
			pod.SetGenerateName("settled-")
		}
		// The ServiceAccount admission plugin, which runs before the webhooks, refuses a Pod whose
		// account does not exist; the account is made so that the Pod gets as far as the webhooks.
		if account, _, _ := unstructured.NestedString(object, "spec", "serviceAccountName"); account != "" {
			_, err := accounts.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: account}}, metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("ServiceAccount %s: %v", account, err)
			}
		}
		_, err := pods.Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		if err == nil {
			return false, "created"
		}
		if strings.Contains(err.Error(), settledOracle) {
			return true, err.Error()
		}
		// Not called, so the Pod passed the stand-in: refused by ray-webhook, or by the API
		// server's validation after the mutating webhooks. Anything else stopped it before them.
		if !strings.Contains(err.Error(), "ray-webhook") && !apierrors.IsInvalid(err) {
			t.Errorf("%s never reached the webhooks: %v", pod.GetName()+pod.GetGenerateName(), err)
		}
		return false, err.Error()
	}
	// The configuration is in force once a worker with no env at all is sent.
	bare := map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"generateName": "bare-", "labels": map[string]any{
			"ray.io/node-type": "worker", "ray.io/cluster": "rc-settled"}},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "ray-worker", "image": "rayproject/ray:2.52.0"}}}}
	framework.Eventually(t, 30*time.Second, 250*time.Millisecond, func() (bool, string) {
		ok, why := called(bare)
		return ok, "a worker without env is not sent to the stand-in yet: " + why
	})
	return called
}

func settledWorkersCondition(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "settled")
	called := settledOracleFor(t, c, ns)

	files, _ := filepath.Glob(filepath.Join(c.Repo, "tests/fixtures/reviews/*.json"))
	var sent, skipped []string
	for _, file := range files {
		name := filepath.Base(file)
		text, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%v", err)
		}
		var review settledReview
		if json.Unmarshal(text, &review) != nil || review.Request.Operation != "CREATE" || review.Request.Kind.Kind != "Pod" {
			continue
		}
		labels, _, _ := unstructured.NestedStringMap(review.Request.Object, "metadata", "labels")
		if nodeType := labels["ray.io/node-type"]; nodeType != "head" && nodeType != "worker" {
			continue // the shipped objectSelector never sends it
		}
		answer := admitAnswer(t, c, name, text)
		needs := !answer.Response.Allowed || answer.Response.Patch != "" || len(answer.Response.Warnings) > 0
		isCalled, why := called(review.Request.Object)
		if isCalled {
			sent = append(sent, name)
		} else {
			skipped = append(skipped, name)
		}
		if needs && !isCalled {
			t.Errorf("%s: ray-webhook answers it (allowed %v, patch %v, %d warnings), but the condition does not send it: %s",
				name, answer.Response.Allowed, answer.Response.Patch != "", len(answer.Response.Warnings), why)
		}
	}
	sort.Strings(skipped)
	for _, name := range settledFixtures {
		if i := sort.SearchStrings(skipped, name); i == len(skipped) || skipped[i] != name {
			t.Errorf("%s, a KubeRay worker that needs nothing, is still sent", name)
		}
	}
	if len(sent) == 0 {
		t.Errorf("no fixture was sent: the check saw no call at all")
	}
	t.Logf("%d Ray Pod fixtures: %d sent, %d not sent (%s)", len(sent)+len(skipped), len(sent), len(skipped),
		strings.Join(skipped, ", "))
}

// settledBenchWorkers: the workers bench/apiserver.sh creates are what its rows say they are.
func settledBenchWorkers(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "settled-bench")
	called := settledOracleFor(t, c, ns)
	for _, settled := range []bool{false, true} {
		args := []string{"-print-pod", "-namespace", ns, "-cluster", "rc-bench", "-cluster-domain", c.ClusterDomain}
		if settled {
			args = append(args, "-settled")
		}
		out, err := exec.Command(filepath.Join(c.Bin, "podload"), args...).Output()
		if err != nil {
			t.Fatalf("podload %v: %v", args, err)
		}
		var pod map[string]any
		if err := json.Unmarshal(out, &pod); err != nil {
			t.Fatalf("podload -print-pod: %v: %s", err, out)
		}
		review, _ := json.Marshal(map[string]any{
			"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
			"request": map[string]any{
				"uid": "bench-worker", "operation": "CREATE", "namespace": ns,
				"kind":     map[string]any{"group": "", "version": "v1", "kind": "Pod"},
				"resource": map[string]any{"group": "", "version": "v1", "resource": "pods"},
				"object":   pod,
			},
		})
		answer := admitAnswer(t, c, "podload's worker", review)
		isCalled, why := called(pod)
		kind := "default"
		if settled {
			kind = "-settled"
		}
		switch {
		case !answer.Response.Allowed:
			t.Errorf("podload's %s worker is refused by ray-webhook", kind)
		case !settled && (answer.Response.Patch == "" || !isCalled):
			t.Errorf("podload's default worker: patch %q, sent %v (%s); the bench's patched rows need both", answer.Response.Patch, isCalled, why)
		case settled && (answer.Response.Patch != "" || len(answer.Response.Warnings) > 0 || isCalled):
			t.Errorf("podload's -settled worker: patch %q, warnings %v, sent %v (%s); it must need nothing", answer.Response.Patch, answer.Response.Warnings, isCalled, why)
		default:
			t.Logf("podload's %s worker: patch %v, sent to the webhooks %v", kind, answer.Response.Patch != "", isCalled)
		}
	}
}
