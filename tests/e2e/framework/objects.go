package framework

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

var placeholder = regexp.MustCompile(`@[A-Z][A-Z0-9_]*@`)

// Toleration tolerates the NoSchedule taint KWOK_TAINT of kwok-node-0: a Pod
// with it is scheduled there, and KWOK makes it Running and Ready with an IP
// of POD_CIDR. It panics when the cluster cannot be attached (call Attach first).
func Toleration() corev1.Toleration {
	c, err := load()
	if err != nil {
		panic("framework.Toleration: " + err.Error())
	}
	return corev1.Toleration{Key: c.KwokTaint, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}
}

// Manifest reads the YAML object in FILE (relative to the test's directory,
// e.g. testdata/raycluster-v1.yaml), with every @KEY@ replaced by vars[KEY],
// and @KWOK_TAINT@ and @CLUSTER_DOMAIN@ by the cluster's unless vars sets
// them. A placeholder left unreplaced fails t.
func Manifest(t testing.TB, file string, vars map[string]string) *unstructured.Unstructured {
	t.Helper()
	c := Attach(t)
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v", err)
	}
	all := map[string]string{"KWOK_TAINT": c.KwokTaint, "CLUSTER_DOMAIN": c.ClusterDomain}
	for k, v := range vars {
		all[k] = v
	}
	s := string(b)
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		s = strings.ReplaceAll(s, "@"+k+"@", all[k])
	}
	// Comments may mention placeholders; only the object's text must not.
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if m := placeholder.FindString(line); m != "" {
			t.Fatalf("%s: placeholder %s has no value", file, m)
		}
	}
	js, err := yaml.YAMLToJSON([]byte(s))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(js); err != nil { // integers as int64, as the API machinery wants
		t.Fatalf("%s: %v", file, err)
	}
	return obj
}

// Resource is the plural resource of obj's kind, found by discovery (so it
// works for CRDs applied a moment ago).
func (c *Cluster) Resource(gvk schema.GroupVersionKind) (schema.GroupVersionResource, error) {
	list, err := c.Kube.Discovery().ServerResourcesForGroupVersion(gvk.GroupVersion().String())
	if err != nil {
		return schema.GroupVersionResource{}, fmt.Errorf("discovery of %s: %v", gvk.GroupVersion(), err)
	}
	for _, r := range list.APIResources {
		if r.Kind == gvk.Kind && !strings.Contains(r.Name, "/") {
			return gvk.GroupVersion().WithResource(r.Name), nil
		}
	}
	return schema.GroupVersionResource{}, fmt.Errorf("the API server serves no kind %s in %s", gvk.Kind, gvk.GroupVersion())
}

// Create creates obj in namespace ns and returns what the API server stored.
func Create(t testing.TB, ns string, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	c := Attach(t)
	gvr, err := c.Resource(obj.GroupVersionKind())
	if err != nil {
		t.Fatalf("creating %s %s/%s: %v", obj.GetKind(), ns, obj.GetName(), err)
	}
	got, err := c.Dynamic.Resource(gvr).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s %s/%s: %v", obj.GetKind(), ns, obj.GetName(), err)
	}
	return got
}
