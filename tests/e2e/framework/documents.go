package framework

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// OperatorModuleDir is the folder of the ray-operator module that
// E2E_DIR/RELEASE/go.mod requires, in the Go module cache (its
// config/samples, config/crd/bases, ...).
func OperatorModuleDir(t testing.TB, release string) string {
	t.Helper()
	c := Attach(t)
	dir, err := moduleDir(filepath.Join(c.E2EDir, release), "github.com/ray-project/kuberay/ray-operator")
	if err != nil {
		t.Fatalf("the ray-operator module of %s: %v", release, err)
	}
	return dir
}

// Documents are the YAML documents of FILE, each decoded as JSON would be
// (empty documents and comment-only ones left out), in file order.
func Documents(t testing.TB, file string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v", err)
	}
	docs, err := splitDocuments(b)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return docs
}

func splitDocuments(b []byte) ([]map[string]any, error) {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	var docs []map[string]any
	for {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		var doc map[string]any
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			return nil, err
		}
		if len(doc) > 0 {
			docs = append(docs, doc)
		}
	}
}
