package e2e

// TestSamples: no false denials. Every ray.io object of KubeRay's own
// ray-operator/config/samples/*.yaml, read at test time from the module the
// suite builds the operator from (the Go module cache, never copied into the
// tree), goes through `kubectl apply --dry-run=server` (admission webhooks run,
// nothing is stored; `kubectl create` for an object with only a
// generateName, which apply refuses) in a namespace of its own per release, and ray-webhook
// must allow it. A sample that kube-apiserver itself refuses (its CRD's schema)
// is listed apart: ray-webhook never saw it. Each release's CRDs are installed
// by framework.Operator (its operator runs beside, and stores nothing here).
//
//	kuberay-v1.6.2  the samples of the current operator, under the shipped flags
//	                (--kuberay-version defaults to 1.6.2)
//	kuberay-v0.3.0  the samples of v0.3.0 (ray.io/v1alpha1), through a replica with
//	                --kuberay-version=0.3.0, as one would run ray-webhook beside that operator
//
// Both count what they sent: every kind the release's CRDs define appears,
// at least as many objects as the release ships today, and ray-webhook
// logged a review of each one it was sent (validate.rayclusters is
// failurePolicy Ignore: an error there would pass silently).

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"ray-webhook/tests/e2e/framework"
)

const samplesDenied = `admission webhook "validate.rayclusters.ray-webhook.io" denied`

// samplesRelease is one operator release whose samples are sent.
type samplesRelease struct {
	release string
	args    []string // a replica's flags after the shipped ones; nil: the shipped replica
	// The ray.io objects its config/samples/*.yaml held when this check was
	// written (v1.6.2: 38 RayClusters, 17 RayJobs, 13 RayServices, 1
	// RayCronJob; v0.3.0: 10, 1 and 1): fewer means the files were not read.
	atLeast int
}

// sample is one ray.io object of a sample file.
type sample struct {
	file, kind, name string
	object           map[string]any
}

// sampleResult is what the API server answered to a sample's dry run.
type sampleResult struct {
	sample
	out framework.KubectlResult
}

func TestSamples(t *testing.T) {
	framework.Attach(t)
	for _, r := range []samplesRelease{
		{release: releaseCurrent, atLeast: 69},
		{release: releaseLegacy, args: []string{"--kuberay-version=0.3.0"}, atLeast: 12},
	} {
		t.Run(r.release, func(t *testing.T) { samplesTest(t, r) })
	}
}

// samplesRead are the ray.io objects of DIR/*.yaml, their namespace dropped
// (a few samples name one; each is sent to the check's namespace).
func samplesRead(t *testing.T, dir string) []sample {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples in %s (%v)", dir, err)
	}
	sort.Strings(files)
	var out []sample
	for _, f := range files {
		for _, doc := range framework.Documents(t, f) {
			api, _ := doc["apiVersion"].(string)
			if !strings.HasPrefix(api, "ray.io/") {
				continue
			}
			meta, _ := doc["metadata"].(map[string]any)
			if meta == nil {
				t.Fatalf("%s: a %s without metadata", f, doc["kind"])
			}
			delete(meta, "namespace")
			kind, _ := doc["kind"].(string)
			name, _ := meta["name"].(string)
			out = append(out, sample{file: filepath.Base(f), kind: kind, name: name, object: doc})
		}
	}
	return out
}

func samplesTest(t *testing.T, r samplesRelease) {
	c := framework.Attach(t)
	op := framework.Operator(t, r.release)
	ns := framework.NewNamespace(t, "samples-"+strings.ReplaceAll(strings.TrimPrefix(r.release, "kuberay-"), ".", "-"))
	log := c.WebhookLog
	if r.args != nil {
		log = framework.WebhookReplica(t, r.args, nil).Process.Log
	}
	dir := filepath.Join(framework.OperatorModuleDir(t, r.release), "config", "samples")
	samples := samplesRead(t, dir)

	// Four kubectl runs at a time: each is a process, and the machine has two cores.
	results := make([]sampleResult, len(samples))
	var wg sync.WaitGroup
	slots := make(chan struct{}, 4)
	for i, s := range samples {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			b, err := json.Marshal(s.object)
			if err != nil {
				results[i] = sampleResult{sample: s, out: framework.KubectlResult{Err: err}}
				return
			}
			verb := "apply"
			if s.name == "" {
				verb = "create" // kubectl apply refuses generateName
			}
			out := framework.Kubectl(t, string(b), "-n", ns, verb, "--dry-run=server", "-f", "-")
			results[i] = sampleResult{sample: s, out: out}
		}()
	}
	wg.Wait()

	kinds := map[string]int{}
	var allowed, denied, schema []string
	for _, res := range results {
		kinds[res.kind]++
		id := fmt.Sprintf("%s %s %q", res.file, res.kind, res.name)
		text := strings.TrimSpace(res.out.Combined())
		switch {
		case strings.Contains(text, samplesDenied):
			denied = append(denied, id)
			t.Errorf("false denial of %s: %s", id, text)
		case strings.Contains(text, "admission webhook") || strings.Contains(text, "failed calling webhook"):
			t.Errorf("%s: an admission webhook other than ray-webhook's answered, or the call failed: %s", id, text)
		case res.out.Err != nil:
			schema = append(schema, id+": "+text)
		default:
			allowed = append(allowed, id)
		}
	}
	t.Logf("%s: %d ray.io objects from %s: %v; allowed %d, denied by ray-webhook %d, refused by kube-apiserver %d",
		r.release, len(samples), dir, kinds, len(allowed), len(denied), len(schema))
	for _, s := range schema {
		t.Logf("refused by kube-apiserver, not by ray-webhook (never sent to it): %s", s)
	}

	if len(samples) < r.atLeast {
		t.Errorf("%d ray.io objects in %s, want at least %d", len(samples), dir, r.atLeast)
	}
	for _, crd := range op.CRDs {
		if kinds[crd.Kind] == 0 {
			t.Errorf("no sample of kind %s (CRD %s) in %s", crd.Kind, crd.Name, dir)
		}
	}
	// Each object that passed kube-apiserver's own checks reached ray-webhook
	// (kubectl apply sends a dry-run CREATE).
	if sent := len(allowed) + len(denied); sent > 0 {
		framework.WaitLines(t, log, sent, "path=/validate ", " namespace="+ns+" ")
	}
}
