package framework

import (
	"sync"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Warnings holds the `Warning` headers of the API server's answers to one
// client: an admission webhook's warnings reach a client only so (kubectl
// prints them as `Warning: ...`).
type Warnings struct {
	mu   sync.Mutex
	list []string
}

// HandleWarningHeader implements rest.WarningHandler.
func (w *Warnings) HandleWarningHeader(code int, agent string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	w.list = append(w.list, text)
	w.mu.Unlock()
}

// Take returns the warnings received since the last Take, and forgets them.
func (w *Warnings) Take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	l := w.list
	w.list = nil
	return l
}

// KubeWithWarnings is a typed client of the cluster (admin credentials) that
// records every warning the API server sends it.
func KubeWithWarnings(t testing.TB) (kubernetes.Interface, *Warnings) {
	t.Helper()
	c := Attach(t)
	w := &Warnings{}
	cfg := rest.CopyConfig(c.RESTConfig)
	cfg.WarningHandler = w
	k, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("client with a warning handler: %v", err)
	}
	return k, w
}
