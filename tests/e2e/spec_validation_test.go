package e2e

// TestSpecValidation: KubeRay's spec checks at admission, against the
// operator itself and against each case file's own verdict. The v1.6.2
// operator runs with --feature-gates=RayCronJob=true (its RayCronJob
// controller is off by default; the gate turns on nothing else in v1.6.2, and
// its CRDs are the ones installed). For every case of
// tests/fixtures/spec/*.yaml (refused and allowed) whose object is of a kind
// and version KubeRay v1.6.2 serves:
//
//	shipped flags   `kubectl apply --dry-run=server` with the shipped ray-webhook
//	                (--kuberay-version 1.6.2, --spec-rule-mode=enforce): whether it refuses, and
//	                with which rule id and field path (one namespace, nothing stored); it must
//	                refuse no RayCronJob (its gate is off by default)
//	raycronjob-gate the RayCronJob cases again, through a replica with the shipped flags and
//	                --kuberay-feature-gates=RayCronJob=true: ray-webhook's verdict on them
//	<rule>/<case>   in a namespace of its own, the case applied through a replica with
//	                --spec-rule-mode=warn and the gate, so it is stored and the operator
//	                reconciles it; the operator's verdict is its own: an Invalid<Kind>Spec or
//	                Invalid<Kind>Metadata Event (or the RayJob's ValidationFailed status, the
//	                RayService's ValidationFailed condition), else a positive sign that it went
//	                past its validation (a RayCluster's status.observedGeneration, a RayJob's
//	                jobDeploymentStatus, the RayCluster a RayService owns, its "managed by a
//	                custom controller" skip; a RayCronJob, suspended once stored, its
//	                SuspendedRayCronJob Event or status.lastScheduleTime). No verdict comes
//	                from a timeout or a log line.
//
// Each case passes when:
//   - the operator refuses exactly when ray-webhook refuses (but for a rule only
//     KubeRay's opt-in webhook checks, which its controller accepts);
//   - its file's verdict holds where its rule is in force at v1.6.2 with these
//     gates (the rule's since, until and gate in docs/rules.md; the gates'
//     defaults from the module's pkg/features): a refused case is refused by
//     ray-webhook naming the case's `refused:` field with the rule's id, and by
//     the operator, and the warn replica printed `Warning: RULE: FIELD: ...`; an
//     allowed case draws no finding of its rule. Where the rule is not in force,
//     ray-webhook finds nothing by it;
//   - kube-apiserver refuses it (the CRD's schema, before any webhook) exactly
//     when the object sets fields v1.6.2's CRD does not define, naming each as
//     `unknown field "PATH"`, in the dry run and when stored; such a case must be
//     of a rule not in force here (a later or earlier release's). A schema
//     refusal without unknown fields must be at a refused case's field; an
//     allowed case so refused fails.
//
// Every row (rule, case, the operator's message, ray-webhook's) is logged,
// then the table that docs/end-to-end.md quotes and the counts.

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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
	// The operator's --feature-gates, and ray-webhook's --kuberay-feature-gates
	// wherever it is compared with the operator: v1.6.2 runs its RayCronJob
	// controller only with this gate (ray-operator/main.go:295@v1.6.2).
	specGates = "RayCronJob=true"
	// What v1.6.2's main.go logs when it sets that controller up.
	specCronJobOn = "RayCronJob feature gate is enabled, starting RayCronJob controller"
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

	InForce    bool     `json:"-"` // its rule refuses at the operator's release and gates
	NotInForce string   `json:"-"` // else why not: "since 1.7.0", "gate RayCronJob", ...
	Unknown    []string `json:"-"` // the fields it sets that the release's CRD does not define
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
	Gated   bool   // from a replica with --kuberay-feature-gates=specGates
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

	kind             string
	inForce, refused bool // the rule is in force; the case file says refused
	schema           bool // kube-apiserver refused it
	operatorRefused  bool
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
	op := framework.OperatorArgs(t, releaseCurrent, []string{"--feature-gates=" + specGates})
	if framework.CountLines(op.Process.Log, specCronJobOn) == 0 {
		t.Fatalf("the operator, given --feature-gates=%s, never logged %q (log %s)", specGates, specCronJobOn, op.Process.Log)
	}
	target := specOperatorTarget(t, op, specGates)
	rules := specRuleTable(t)
	schemas := specSchemas(t, op.CRDDir)
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
	var cronCases []int
	for i := range cases {
		sc := &cases[i]
		rule, ok := rules[sc.Rule]
		if !ok {
			t.Fatalf("%s.yaml: rule %s has no row of releases in %s", sc.Rule, sc.Rule, specRulesDoc)
		}
		sc.InForce, sc.NotInForce = target.inForce(rule, sc.kind())
		sc.Unknown = specUnknownFields(schemas[fmt.Sprint(sc.Object["apiVersion"], "/", sc.kind())], sc.Object)
		if sc.kind() == "RayCronJob" {
			cronCases = append(cronCases, i)
		}
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
	// The shipped flags take v1.6.2's default gates, RayCronJob off, under
	// which nothing checks a RayCronJob; the operator here runs with the gate,
	// so ray-webhook answers those cases again with it, before the replica
	// of the operator's namespaces.
	for _, i := range cronCases {
		if admissions[i].Refused {
			t.Errorf("under the shipped flags (the RayCronJob gate off) ray-webhook refuses RayCronJob %s/%s: %s",
				cases[i].Rule, cases[i].Name, admissions[i].Message)
		}
	}
	t.Run("raycronjob-gate", func(t *testing.T) {
		framework.WebhookReplica(t, []string{"--kuberay-feature-gates=" + specGates}, nil)
		parallel(len(cronCases), specParallel, func(j int) {
			i := cronCases[j]
			admissions[i] = specAdmit(specApply(t, cases[i], admissionNS, "--dry-run=server"))
			admissions[i].Gated = true
		})
	})

	var mu sync.Mutex
	var rows []specRow
	bothRefuse := 0
	t.Run("operator", func(t *testing.T) {
		framework.WebhookReplica(t, []string{"--spec-rule-mode=warn", "--kuberay-feature-gates=" + specGates}, nil)
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
						row, both := specCheck(t, op, target, cases[i], admissions[i])
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
	table.WriteString("| rule | case | case file says | KubeRay v1.6.2 (RayCronJob=true) | ray-webhook (shipped flags; a RayCronJob with RayCronJob=true) |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&table, "| `%s` | `%s` | %s | %s | %s |\n", r.Rule, r.Case, r.Expected,
			specCell(r.Operator), specCell(r.Webhook))
	}
	t.Logf("%d cases, %d refused by both:\n%s", len(rows), bothRefuse, table.String())
	t.Log(specCounts(rows))
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
// compares the verdicts, with each other and with the case file's; it returns
// the row and whether both refused.
func specCheck(t *testing.T, op *framework.KubeRay, target specTarget, sc specCase, adm specAdmission) (specRow, bool) {
	row := specRow{Rule: sc.Rule, Case: sc.Name, Expected: sc.expected(), kind: sc.kind(), inForce: sc.InForce, refused: sc.Refused != ""}
	if !sc.InForce {
		row.Expected += " (not in force at " + target.Version.String() + ": " + sc.NotInForce + ")"
	}
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
	if adm.Gated {
		row.Webhook = "(" + specGates + ") " + row.Webhook
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
		row.schema = true
		specCheckSchema(t, sc, adm, stored)
		t.Logf("row | %s | %s | %s | operator: %s | ray-webhook: %s", row.Rule, row.Case, row.Expected, row.Operator, row.Webhook)
		return row, false
	case stored.Other != "":
		t.Errorf("storing the case: %s", stored.Other)
	}
	if len(sc.Unknown) > 0 {
		t.Errorf("kube-apiserver stored the case, though %s's CRD does not define %q", op.Release, sc.Unknown)
	}
	if t.Failed() {
		row.Operator = "(not run)"
		return row, false
	}
	if sc.InForce && sc.Refused != "" {
		want := "Warning: " + sc.Rule + ": " + sc.Refused + ": "
		if !strings.Contains(out.Combined(), want) {
			t.Errorf("the warn replica printed no line starting %q:\n%s", want, out.Combined())
		}
	}

	v := specOperatorVerdict(t, op, sc, ns)
	row.operatorRefused = v.Refused
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
	specCheckExpected(t, target, sc, adm, v)
	return row, v.Refused && adm.Refused
}

// specCheckExpected holds the case to its file's verdict. Where its rule is
// in force: a refused case is refused by ray-webhook at the case's field with
// the rule's id, and by the operator (but a rule that only KubeRay's webhook
// checks); an allowed case draws no finding of its rule (another rule may
// refuse the object). Where the rule is not in force (another release, or a
// gate the other way), ray-webhook must not find it either.
func specCheckExpected(t *testing.T, target specTarget, sc specCase, adm specAdmission, v specVerdict) {
	t.Helper()
	namesRule := adm.Refused && strings.Contains(adm.Message, "("+sc.Rule+")")
	switch {
	case !sc.InForce:
		if namesRule {
			t.Errorf("%s is not in force at %s (%s), yet ray-webhook refuses by it: %s", sc.Rule, target.Version, sc.NotInForce, adm.Message)
		}
	case sc.Refused != "":
		if !adm.Refused || !specNamesField(adm.Message, sc.Refused, sc.Rule) {
			t.Errorf("the case file says refused: %s (%s); ray-webhook does not name it: %s", sc.Refused, sc.Rule, adm.Message)
		}
		if _, webhookOnly := specWebhookOnly[sc.Rule]; !webhookOnly && !v.Refused {
			t.Errorf("the case file says refused: %s (%s); KubeRay %s accepts it (%s)", sc.Refused, sc.Rule, target.Version, v.Reason)
		}
	default:
		if namesRule {
			t.Errorf("the case file says allowed; ray-webhook refuses it by %s: %s", sc.Rule, adm.Message)
		}
	}
}

// specCheckSchema holds kube-apiserver's own refusal of a case to the schema
// of the release's CRD. It must name as unknown exactly the fields the CRD
// does not define, in the dry run and when stored. Such fields are those of
// another release, so the case's rule must not be in force here: its verdict,
// allowed or refused, is the unit tests' at the rule's releases. A refusal
// that names no unknown field is a value the schema refuses itself (a CEL
// rule, a minimum), of a refused case, at the case's field
// (`FIELD: Invalid value: ...`, `FIELD: Required value`); an allowed case so
// refused fails.
func specCheckSchema(t *testing.T, sc specCase, adm specAdmission, stored specAdmission) {
	t.Helper()
	if adm.Schema == "" {
		t.Errorf("stored, kube-apiserver refuses the case; in the dry run it did not (%s): %s", specCell(adm.Output), stored.Schema)
	}
	for _, refusal := range []string{adm.Schema, stored.Schema} {
		if refusal == "" {
			continue
		}
		if got := specSchemaUnknown(refusal); !slices.Equal(got, sc.Unknown) {
			t.Errorf("kube-apiserver names unknown fields %q; the CRD does not define %q: %s", got, sc.Unknown, refusal)
		}
	}
	switch {
	case len(sc.Unknown) > 0:
		if sc.InForce {
			t.Errorf("%s is in force here, yet its case sets %q, which the CRD does not define", sc.Rule, sc.Unknown)
		}
	case sc.Allowed:
		t.Errorf("an allowed case that kube-apiserver refuses: %s", stored.Schema)
	case !strings.Contains(stored.Schema, sc.Refused+": "):
		t.Errorf("kube-apiserver refuses the case, not at %s: %s", sc.Refused, stored.Schema)
	}
}

// specCounts sums up what the rows asserted.
func specCounts(rows []specRow) string {
	var allowed, refused, other, schemaUnknown, cron, cronRefused int
	for _, r := range rows {
		switch {
		case r.schema:
			schemaUnknown++
		case !r.inForce:
			other++
		case r.refused:
			refused++
		default:
			allowed++
		}
		if r.kind == "RayCronJob" && !r.schema {
			cron++
			if r.operatorRefused {
				cronRefused++
			}
		}
	}
	return fmt.Sprintf("asserted as their case file says, their rule in force: %d allowed, %d refused; "+
		"%d whose rule is not in force (no finding of it); %d refused by kube-apiserver's schema (the unknown fields named); "+
		"%d RayCronJobs stored, %d refused by the operator, %d accepted",
		allowed, refused, other, schemaUnknown, cron, cronRefused, cron-cronRefused)
}

// specOperatorVerdict waits for KubeRay v1.6.2's own verdict on the case
// stored in NS: a refusal it reports, or a sign that it went past its
// validation.
func specOperatorVerdict(t *testing.T, op *framework.KubeRay, sc specCase, ns string) specVerdict {
	t.Helper()
	c := framework.Attach(t)
	ctx := context.Background()
	kind, name := sc.kind(), sc.objectName()
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
	if kind == "RayCronJob" {
		// A valid RayCronJob shows nothing until its schedule's next time
		// (hours, for some cases), when it creates a RayJob. Suspended, its
		// reconcile says so in a SuspendedRayCronJob Event, which comes only
		// after ValidateRayCronJobSpec, which does not read spec.suspend
		// (raycronjob_controller.go:78-91@v1.6.2): the verdict is the case's.
		_, err := c.Dynamic.Resource(gvr).Namespace(ns).Patch(ctx, name, types.MergePatchType,
			[]byte(`{"spec":{"suspend":true}}`), metav1.PatchOptions{})
		if err != nil {
			t.Fatalf("suspending RayCronJob %s/%s: %v", ns, name, err)
		}
	}

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
			if e.Type == corev1.EventTypeNormal && e.InvolvedObject.Kind == "RayCronJob" && e.Reason == "SuspendedRayCronJob" {
				v = specVerdict{Reason: e.Reason + " Event"}
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
	case "RayCronJob":
		// Past its validation and its schedule's time: a RayJob created.
		if s, _, _ := unstructured.NestedString(obj.Object, "status", "lastScheduleTime"); s != "" {
			return "", "", "status.lastScheduleTime " + s
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
