package e2e

// Where a case file's own verdict holds, for TestSpecValidation. A case says
// what its rule finds at the rule's releases and gate; the operator the suite
// runs is one release with one set of gates. So, for each case:
//
//   - its rule's `since`, `until` and `gate`, from the tables of
//     docs/rules.md (the ones the unit tests hold ray-webhook's rules to);
//   - the operator's gates: its release's defaults, read from the same
//     module's pkg/features/features.go, with the suite's --feature-gates over
//     them; a RayCronJob needs the RayCronJob gate besides (without it the
//     operator runs no RayCronJob controller);
//   - the fields its object sets that the release's CRD does not define (its
//     openAPIV3Schema walked as kube-apiserver prunes it), which kube-apiserver
//     must name, each as `unknown field "PATH"`, before any webhook is called.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"ray-webhook/tests/e2e/framework"
)

const specRulesDoc = "../../docs/rules.md"

// specVersion is a release, X.Y.Z; the zero value is none.
type specVersion [3]int

func (v specVersion) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

func (v specVersion) less(o specVersion) bool {
	for i := range v {
		if v[i] != o[i] {
			return v[i] < o[i]
		}
	}
	return false
}

func parseSpecVersion(s string) (specVersion, bool) {
	var v specVersion
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	if len(parts) != 3 {
		return v, false
	}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			return v, false
		}
		v[i] = n
	}
	return v, true
}

// specRuleInfo is one row of docs/rules.md's spec check tables.
type specRuleInfo struct {
	Since, Until specVersion // Until zero: still made
	Gate         string      // "", GATE (needs it on) or !GATE (needs it off)
}

// specRuleRow: | `ID` | SINCE | UNTIL | GATE | SOURCE |
var specRuleRow = regexp.MustCompile("^\\| `([a-z0-9-]+)` \\| ([0-9]+\\.[0-9]+\\.[0-9]+) \\| *([0-9]+\\.[0-9]+\\.[0-9]+)? *\\| *(!?[A-Za-z0-9]*) *\\|")

func specRuleTable(t *testing.T) map[string]specRuleInfo {
	t.Helper()
	b, err := os.ReadFile(specRulesDoc)
	if err != nil {
		t.Fatalf("the rules' releases: %v", err)
	}
	rules := map[string]specRuleInfo{}
	for _, line := range strings.Split(string(b), "\n") {
		m := specRuleRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var r specRuleInfo
		r.Since, _ = parseSpecVersion(m[2])
		if m[3] != "" {
			r.Until, _ = parseSpecVersion(m[3])
		}
		r.Gate = m[4]
		rules[m[1]] = r
	}
	if len(rules) == 0 {
		t.Fatalf("no spec check row in %s", specRulesDoc)
	}
	return rules
}

// specTarget is the operator the cases run against.
type specTarget struct {
	Version specVersion
	Gates   map[string]bool
}

var (
	specGateName    = regexp.MustCompile(`(?m)^\s*(\w+)\s+featuregate\.Feature\s*=\s*"(\w+)"`)
	specGateDefault = regexp.MustCompile(`(?m)^\s*(\w+):\s*\{Default:\s*(true|false)`)
)

// specOperatorTarget: OP's release, its gates' defaults from its module's
// pkg/features/features.go, then GATES (its --feature-gates, A=true,B=false).
func specOperatorTarget(t *testing.T, op *framework.KubeRay, gates string) specTarget {
	t.Helper()
	v, ok := parseSpecVersion(strings.TrimPrefix(op.Release, "kuberay-"))
	if !ok {
		t.Fatalf("no release in %q", op.Release)
	}
	// CRDDir is the module's config/crd/bases.
	features := filepath.Join(op.CRDDir, "..", "..", "..", "pkg", "features", "features.go")
	b, err := os.ReadFile(features)
	if err != nil {
		t.Fatalf("the operator's feature gates: %v", err)
	}
	names := map[string]string{}
	for _, m := range specGateName.FindAllStringSubmatch(string(b), -1) {
		names[m[1]] = m[2]
	}
	target := specTarget{Version: v, Gates: map[string]bool{}}
	for _, m := range specGateDefault.FindAllStringSubmatch(string(b), -1) {
		if name, ok := names[m[1]]; ok {
			target.Gates[name] = m[2] == "true"
		}
	}
	if len(target.Gates) == 0 {
		t.Fatalf("no gate default in %s", features)
	}
	for _, kv := range strings.Split(gates, ",") {
		name, value, _ := strings.Cut(kv, "=")
		if _, known := target.Gates[name]; !known {
			t.Fatalf("gate %q: %s does not define it", name, features)
		}
		target.Gates[name] = value == "true"
	}
	return target
}

// inForce says whether RULE refuses at the target, and why not when it does
// not. A gate the release does not define is off.
func (tg specTarget) inForce(rule specRuleInfo, kind string) (bool, string) {
	if tg.Version.less(rule.Since) {
		return false, "since " + rule.Since.String()
	}
	if rule.Until != (specVersion{}) && !tg.Version.less(rule.Until) {
		return false, "until " + rule.Until.String()
	}
	if rule.Gate != "" {
		gate, off := strings.CutPrefix(rule.Gate, "!")
		if tg.Gates[gate] == off {
			return false, "gate " + rule.Gate
		}
	}
	if kind == "RayCronJob" && !tg.Gates["RayCronJob"] {
		return false, "gate RayCronJob"
	}
	return true, ""
}

// specSchemas reads the openAPIV3Schema of every served version of the CRDs
// in DIR, by GROUP/VERSION/KIND.
func specSchemas(t *testing.T, dir string) map[string]map[string]any {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s (%v)", dir, err)
	}
	schemas := map[string]map[string]any{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatalf("%v", err)
		}
		var crd struct {
			Spec struct {
				Group string `json:"group"`
				Names struct {
					Kind string `json:"kind"`
				} `json:"names"`
				Versions []struct {
					Name   string `json:"name"`
					Served bool   `json:"served"`
					Schema struct {
						OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Served {
				schemas[crd.Spec.Group+"/"+v.Name+"/"+crd.Spec.Names.Kind] = v.Schema.OpenAPIV3Schema
			}
		}
	}
	return schemas
}

// specUnknownFields lists, sorted, the paths of OBJ that SCHEMA does not
// define, as kube-apiserver's strict field validation names them
// (spec.a.b, spec.list[0].c). The top-level metadata is ObjectMeta, decoded
// by kube-apiserver itself, and is left out.
func specUnknownFields(schema map[string]any, obj map[string]any) []string {
	var out []string
	root := map[string]any{}
	for k, v := range obj {
		if k != "metadata" && k != "apiVersion" && k != "kind" {
			root[k] = v
		}
	}
	specWalk(schema, root, "", &out)
	sort.Strings(out)
	return out
}

func specWalk(schema map[string]any, v any, path string, out *[]string) {
	if schema == nil {
		return
	}
	if keep, _ := schema["x-kubernetes-preserve-unknown-fields"].(bool); keep {
		return
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := schema["properties"].(map[string]any)
		if open, _ := schema["additionalProperties"].(bool); open {
			return
		}
		extra, _ := schema["additionalProperties"].(map[string]any)
		for k, sub := range x {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if s, ok := props[k].(map[string]any); ok {
				specWalk(s, sub, p, out)
			} else if extra != nil {
				specWalk(extra, sub, p, out)
			} else {
				*out = append(*out, p)
			}
		}
	case []any:
		items, _ := schema["items"].(map[string]any)
		for i, sub := range x {
			specWalk(items, sub, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

var specUnknownField = regexp.MustCompile(`unknown field "([^"]+)"`)

// specSchemaUnknown lists, sorted, the fields kube-apiserver's refusal names unknown.
func specSchemaUnknown(message string) []string {
	var out []string
	for _, m := range specUnknownField.FindAllStringSubmatch(message, -1) {
		out = append(out, m[1])
	}
	sort.Strings(out)
	return out
}
