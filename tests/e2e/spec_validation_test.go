package e2e

// TestSpecValidation: KubeRay's spec checks at admission, against the
// operator itself. For every case of tests/fixtures/spec/*.yaml (refused and
// allowed) whose object is of a kind and version KubeRay v1.6.2 serves:
//
//	shipped flags  `kubectl apply --dry-run=server` with the shipped ray-webhook
//	               (--kuberay-version 1.6.2, --spec-rule-mode=enforce): whether it refuses, and
//	               with which rule id and field path (one namespace, nothing stored)
//	<rule>/<case>  in a namespace of its own, the case applied through a replica with
//	               --spec-rule-mode=warn, so it is stored and the operator reconciles it; the
//	               operator's verdict is its own: an Invalid<Kind>Spec or Invalid<Kind>Metadata
//	               Event (or the RayJob's ValidationFailed status, the RayService's
//	               ValidationFailed condition), else a positive sign that it went past its
//	               validation (a RayCluster's status.observedGeneration, a RayJob's
//	               jobDeploymentStatus, the RayCluster a RayService owns, its "managed by a
//	               custom controller" skip); a RayCronJob is never reconciled by v1.6.2 with its
//	               default gates (its controller is off, the operator logs so at start), so
//	               that log line is its verdict. No verdict comes from a timeout.
//
// Each case passes when the operator refuses exactly when ray-webhook refuses,
// a refused case's denial names the case's `refused:` field with the rule's id,
// and the warn replica printed `Warning: RULE: FIELD: ...` for it. A case that
// kube-apiserver refuses itself (its CRD's schema) reaches neither; it is
// listed, and fails only when the case says `allowed`. Every row (rule, case,
// the operator's message, ray-webhook's) is logged, and the table at the end
// is what tests/e2e/README.md quotes.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"ray-webhook/tests/e2e/framework"
)

const (
	specCasesGlob = "../fixtures/spec/*.yaml"
	specDenied    = `admission webhook "validate.rayclusters.ray-webhook.io" denied the request: `
	// Cases at once: each is a namespace, a kubectl run and a few reconciles,
	// on two cores shared with the cluster's processes.
	specParallel = 8
	// Time for the operator's verdict; a few seconds when it is idle.
	specVerdictTimeout = 150 * time.Second
	// v1.6.2's main.go when the RayCronJob gate is off, as it is by default.
	specCronJobOff = "RayCronJob feature gate is disabled, skipping RayCronJob controller setup"
)

// specWebhookOnly: rules that KubeRay checks only in its admission webhook,
// which the operator serves only with ENABLE_WEBHOOKS=true
// (ray-operator/main.go:290@v1.6.2); its controller accepts their cases.
var specWebhookOnly = map[string]string{
	"group-name-unique": "ray-operator/pkg/webhooks/v1/raycluster_webhook.go:79@v1.6.2",
}

// specCase is one YAML document of a case file.
type specCase struct {
	Rule    string         `json:"-"` // the file's name without .yaml
	Name    string         `json:"-"` // the subtest's: the object's name, made unique in its file
	Refused string         `json:"refused"`
	Allowed bool           `json:"allowed"`
	Object  map[string]any `json:"object"`
}

func (c specCase) kind() string { s, _ := c.Object["kind"].(string); return s }

func (c specCase) objectName() string {
	meta, _ := c.Object["metadata"].(map[string]any)
	s, _ := meta["name"].(string)
	return s
}

func (c specCase) expected() string {
	if c.Refused != "" {
		return "refused: " + c.Refused
	}
	return "allowed"
}

// specAdmission is what the shipped ray-webhook said to a case.
type specAdmission struct {
	Refused bool
	Message string // the denial after "denied the request: "
	Output  string // all kubectl printed
	Schema  string // kube-apiserver's own refusal (the webhook was never called)
	Other   string // anything else that went wrong
}

// specVerdict is the operator's.
type specVerdict struct {
	Refused bool
	Reason  string // the Event's reason, or what showed acceptance
	Message string
}

// specRow is one line of the table.
type specRow struct {
	Rule, Case, Expected, Operator, Webhook string
}

// specCases reads every case file; cases of kinds or versions that v1.6.2's
// CRDs do not serve are returned apart.
func specCases(t *testing.T, served map[string]bool) (cases, other []specCase) {
	t.Helper()
	files, err := filepath.Glob(specCasesGlob)
	if err != nil {
		t.Fatalf("%v", err)
	}
	sort.Strings(files)
	for _, f := range files {
		rule := strings.TrimSuffix(filepath.Base(f), ".yaml")
		seen := map[string]int{}
		for i, doc := range framework.Documents(t, f) {
			b, _ := json.Marshal(doc)
			var c specCase
			if err := yaml.Unmarshal(b, &c); err != nil {
				t.Fatalf("%s document %d: %v", f, i+1, err)
			}
			if (c.Refused == "") == !c.Allowed || c.Object == nil || c.objectName() == "" {
				t.Fatalf("%s document %d: want `refused: FIELD` or `allowed: true`, and an object with a name", f, i+1)
			}
			c.Rule = rule
			c.Name = c.objectName()
			if seen[c.Name]++; seen[c.Name] > 1 {
				c.Name = fmt.Sprintf("%s-%d", c.Name, seen[c.Name])
			}
			if served[fmt.Sprint(c.Object["apiVersion"], "/", c.kind())] {
				cases = append(cases, c)
			} else {
				other = append(other, c)
			}
		}
	}
	return cases, other
}

// specApply runs kubectl apply of the case's object in NS (ARGS before -f -).
func specApply(t testing.TB, c specCase, ns string, args ...string) framework.KubectlResult {
	t.Helper()
	obj := map[string]any{}
	for k, v := range c.Object {
		obj[k] = v
	}
	if meta, ok := c.Object["metadata"].(map[string]any); ok {
		m := map[string]any{}
		for k, v := range meta {
			if k != "namespace" {
				m[k] = v
			}
		}
		obj["metadata"] = m
	}
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return framework.Kubectl(t, string(b), append(append([]string{"-n", ns, "apply"}, args...), "-f", "-")...)
}

// specAdmit classifies a kubectl apply's answer.
func specAdmit(out framework.KubectlResult) specAdmission {
	text := strings.TrimSpace(out.Combined())
	if i := strings.Index(text, specDenied); i >= 0 {
		return specAdmission{Refused: true, Message: strings.TrimSpace(text[i+len(specDenied):]), Output: text}
	}
	if out.Err == nil {
		return specAdmission{}
	}
	if strings.Contains(text, "admission webhook") || strings.Contains(text, "failed calling webhook") {
		return specAdmission{Other: text}
	}
	return specAdmission{Schema: text}
}

// specNamesField: the denial has a finding at FIELD by rule RULE
// (`FIELD: REASON (RULE)`, findings separated by "; "; a reason may hold
// "; " itself, so the shortest match from the field to the rule's id).
func specNamesField(denial, field, rule string) bool {
	re := regexp.MustCompile(`(^|[:;] )` + regexp.QuoteMeta(field) + `: .*?\(` + regexp.QuoteMeta(rule) + `\)`)
	return re.MatchString(denial)
}

func TestSpecValidation(t *testing.T) {
	c := framework.Attach(t)
	op := framework.Operator(t, releaseCurrent)
	served := map[string]bool{}
	for _, crd := range op.CRDs {
		for _, v := range crd.Versions {
			served[crd.Group+"/"+v+"/"+crd.Kind] = true
		}
	}
	cases, other := specCases(t, served)
	for _, o := range other {
		t.Logf("not run: %s/%s, a %v %s, which KubeRay v1.6.2 does not serve", o.Rule, o.Name, o.Object["apiVersion"], o.kind())
	}
	if len(cases) == 0 {
		t.Fatalf("no case in %s of a kind KubeRay v1.6.2 serves", specCasesGlob)
	}

	// The shipped flags first, each case a dry run (so a CREATE, as in the
	// operator's namespace later), before the replica takes the route.
	admissionNS := framework.NewNamespace(t, "spec-admission")
	admissions := make([]specAdmission, len(cases))
	parallel(len(cases), specParallel, func(i int) {
		admissions[i] = specAdmit(specApply(t, cases[i], admissionNS, "--dry-run=server"))
	})
	framework.WaitLines(t, c.WebhookLog, len(cases)-countSchema(admissions), "path=/validate ", " namespace="+admissionNS+" ")
	for i, a := range admissions {
		if a.Refused {
			t.Logf("kubectl apply of %s/%s under the shipped flags prints:\n%s", cases[i].Rule, cases[i].Name, a.Output)
			break
		}
	}

	var mu sync.Mutex
	var rows []specRow
	bothRefuse := 0
	t.Run("operator", func(t *testing.T) {
		framework.WebhookReplica(t, []string{"--spec-rule-mode=warn"}, nil)
		byRule := map[string][]int{}
		var rules []string
		for i, sc := range cases {
			if byRule[sc.Rule] == nil {
				rules = append(rules, sc.Rule)
			}
			byRule[sc.Rule] = append(byRule[sc.Rule], i)
		}
		var wg sync.WaitGroup
		slots := make(chan struct{}, specParallel)
		for _, rule := range rules {
			for _, i := range byRule[rule] {
				wg.Add(1)
				go func() {
					defer wg.Done()
					slots <- struct{}{}
					defer func() { <-slots }()
					// t.Run from several goroutines at once: allowed, and
					// not bound by -test.parallel (GOMAXPROCS, 2 here).
					t.Run(rule+"/"+cases[i].Name, func(t *testing.T) {
						row, both := specCheck(t, op, cases[i], admissions[i])
						mu.Lock()
						rows = append(rows, row)
						if both {
							bothRefuse++
						}
						mu.Unlock()
					})
				}()
			}
		}
		wg.Wait()
	})

	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Rule != rows[j].Rule {
			return rows[i].Rule < rows[j].Rule
		}
		return rows[i].Case < rows[j].Case
	})
	var table strings.Builder
	table.WriteString("| rule | case | case file says | KubeRay v1.6.2 | ray-webhook (shipped flags) |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&table, "| `%s` | `%s` | %s | %s | %s |\n", r.Rule, r.Case, r.Expected,
			specCell(r.Operator), specCell(r.Webhook))
	}
	t.Logf("%d cases, %d refused by both:\n%s", len(rows), bothRefuse, table.String())
	refusedCases := 0
	for _, sc := range cases {
		if sc.Refused != "" {
			refusedCases++
		}
	}
	// A run in which nothing was refused proves nothing about the refusals.
	if refusedCases > 0 && bothRefuse == 0 && len(rows) == len(cases) {
		t.Errorf("%d refused cases, none refused by both the operator and ray-webhook", refusedCases)
	}
}

func countSchema(a []specAdmission) int {
	n := 0
	for _, x := range a {
		if x.Schema != "" {
			n++
		}
	}
	return n
}

// specCell is a table cell: one line, pipes escaped.
func specCell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

// parallel calls f(0..n-1), at most LIMIT at a time, and waits for them all.
func parallel(n, limit int, f func(i int)) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, limit)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			f(i)
		}()
	}
	wg.Wait()
}

// specCheck runs one case through the warn replica and the operator and
// compares the verdicts; it returns the row and whether both refused.
func specCheck(t *testing.T, op *framework.KubeRay, sc specCase, adm specAdmission) (specRow, bool) {
	row := specRow{Rule: sc.Rule, Case: sc.Name, Expected: sc.expected()}
	switch {
	case adm.Refused:
		row.Webhook = "refuses: " + adm.Message
	case adm.Schema != "":
		row.Webhook = "(kube-apiserver refuses: " + adm.Schema + ")"
	case adm.Other != "":
		row.Webhook = "error: " + adm.Other
	default:
		row.Webhook = "allows"
	}
	if adm.Other != "" {
		t.Errorf("under the shipped flags: %s", adm.Other)
	}

	ns := framework.NewNamespace(t, "spec-"+sc.Rule)
	out := specApply(t, sc, ns)
	stored := specAdmit(out)
	switch {
	case stored.Refused:
		t.Errorf("the --spec-rule-mode=warn replica refused the case: %s", stored.Message)
	case stored.Schema != "":
		row.Operator = "(never stored: kube-apiserver refuses it)"
		// A field v1.6.2's CRD does not define is a case for a later
		// release; any other refusal of an allowed case is the case's error.
		if sc.Allowed && !strings.Contains(stored.Schema, "strict decoding error: unknown field") {
			t.Errorf("an allowed case that kube-apiserver refuses: %s", stored.Schema)
		}
		t.Logf("row | %s | %s | %s | operator: %s | ray-webhook: %s", row.Rule, row.Case, row.Expected, row.Operator, row.Webhook)
		return row, false
	case stored.Other != "":
		t.Errorf("storing the case: %s", stored.Other)
	}
	if t.Failed() {
		row.Operator = "(not run)"
		return row, false
	}
	if adm.Refused && sc.Refused != "" {
		want := "Warning: " + sc.Rule + ": " + sc.Refused + ": "
		if !strings.Contains(out.Combined(), want) {
			t.Errorf("the warn replica printed no line starting %q:\n%s", want, out.Combined())
		}
	}

	v := specOperatorVerdict(t, op, sc, ns)
	if v.Refused {
		row.Operator = "refuses (" + v.Reason + "): " + v.Message
	} else {
		row.Operator = "accepts (" + v.Reason + ")"
	}
	t.Logf("row | %s | %s | %s | operator: %s | ray-webhook: %s", row.Rule, row.Case, row.Expected, row.Operator, row.Webhook)

	if source, ok := specWebhookOnly[sc.Rule]; ok && adm.Refused {
		// The operator accepts what only KubeRay's opt-in webhook refuses.
		row.Operator += " (refused by KubeRay's own webhook, " + source + ")"
		if v.Refused {
			t.Errorf("KubeRay v1.6.2's controller refuses a case of %s, which only its webhook checks: %s", sc.Rule, row.Operator)
		}
	} else if v.Refused != adm.Refused {
		t.Errorf("KubeRay v1.6.2 %s, ray-webhook %s", row.Operator, row.Webhook)
	}
	if adm.Refused && sc.Refused != "" && !specNamesField(adm.Message, sc.Refused, sc.Rule) {
		t.Errorf("ray-webhook's denial does not name %s with (%s): %s", sc.Refused, sc.Rule, adm.Message)
	}
	return row, v.Refused && adm.Refused
}

// specOperatorVerdict waits for KubeRay v1.6.2's own verdict on the case
// stored in NS: a refusal it reports, or a sign that it went past its
// validation.
func specOperatorVerdict(t *testing.T, op *framework.KubeRay, sc specCase, ns string) specVerdict {
	t.Helper()
	c := framework.Attach(t)
	ctx := context.Background()
	kind, name := sc.kind(), sc.objectName()
	if kind == "RayCronJob" {
		if framework.CountLines(op.Process.Log, specCronJobOff) > 0 {
			return specVerdict{Reason: "never reconciled: the RayCronJob gate is off by default"}
		}
	}
	apiVersion, _ := sc.Object["apiVersion"].(string)
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		t.Fatalf("%v", err)
	}
	gvr, err := c.Resource(gv.WithKind(kind))
	if err != nil {
		t.Fatalf("%v", err)
	}
	strip := func(msg string) string {
		msg = strings.ReplaceAll(msg, " "+ns+"/"+name+": ", " ")
		return strings.TrimPrefix(msg, ns+"/"+name+": ")
	}
	invalid := map[string]bool{"Invalid" + kind + "Spec": true, "Invalid" + kind + "Metadata": true}
	skipped := "Skipping " + kind + " managed by a custom controller"

	var v specVerdict
	framework.Eventually(t, specVerdictTimeout, 500*time.Millisecond, func() (bool, string) {
		evs, err := c.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false, fmt.Sprintf("listing Events: %v", err)
		}
		var reasons []string
		for _, e := range evs.Items {
			if e.Type == corev1.EventTypeWarning && e.InvolvedObject.Kind == kind && invalid[e.Reason] {
				v = specVerdict{Refused: true, Reason: e.Reason, Message: strip(e.Message)}
				return true, ""
			}
			reasons = append(reasons, e.Reason)
		}
		obj, err := c.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, fmt.Sprintf("getting %s %s/%s: %v", kind, ns, name, err)
		}
		if refusal, msg, sign := specStatus(t, obj, ns); refusal != "" {
			v = specVerdict{Refused: true, Reason: refusal, Message: strip(msg)}
			return true, ""
		} else if sign != "" {
			v = specVerdict{Reason: sign}
			return true, ""
		}
		if framework.CountLines(op.Process.Log, skipped, ns) > 0 {
			v = specVerdict{Reason: "skipped: managed by a custom controller"}
			return true, ""
		}
		return false, fmt.Sprintf("no verdict of the operator on %s %s/%s (Events: %v)", kind, ns, name, reasons)
	})
	return v
}

// specStatus is what OBJ's status says of the operator's validation: a
// refusal the RayJob or RayService records itself (beside its Event), or a
// sign that the operator went past it; nothing yet when both are "".
func specStatus(t *testing.T, obj *unstructured.Unstructured, ns string) (refusal, message, sign string) {
	switch obj.GetKind() {
	case "RayCluster":
		// calculateStatus runs only past the validation.
		if g, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration"); g > 0 {
			return "", "", fmt.Sprintf("status.observedGeneration %d", g)
		}
	case "RayJob":
		s, _, _ := unstructured.NestedString(obj.Object, "status", "jobDeploymentStatus")
		if s == "ValidationFailed" {
			m, _, _ := unstructured.NestedString(obj.Object, "status", "message")
			return "jobDeploymentStatus ValidationFailed", m, ""
		}
		if s != "" {
			return "", "", "jobDeploymentStatus " + s
		}
	case "RayService":
		conds, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
		for _, x := range conds {
			if m, ok := x.(map[string]any); ok && m["reason"] == "ValidationFailed" {
				msg, _ := m["message"].(string)
				return "condition " + fmt.Sprint(m["type"]) + " ValidationFailed", msg, ""
			}
		}
		c := framework.Attach(t)
		list, err := c.Dynamic.Resource(schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}).
			Namespace(ns).List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return "", "", ""
		}
		for _, rc := range list.Items {
			for _, o := range rc.GetOwnerReferences() {
				if o.Kind == "RayService" && o.Name == obj.GetName() {
					return "", "", "RayCluster " + rc.GetName() + " created"
				}
			}
		}
	}
	return "", "", ""
}
