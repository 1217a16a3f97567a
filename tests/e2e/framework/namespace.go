package framework

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// NamespaceLabel marks the namespaces this framework creates.
const NamespaceLabel = "e2e.ray-webhook.io/go-suite"

// NewNamespace creates a namespace named PREFIX-<random> (generateName),
// waits until kube-controller-manager has made its ServiceAccount default
// (the ServiceAccount admission plugin refuses Pods until then), and deletes
// it when t ends (without waiting for the namespace controller to finish).
func NewNamespace(t testing.TB, prefix string) string {
	t.Helper()
	c := Attach(t)
	prefix = strings.TrimSuffix(strings.ToLower(prefix), "-")
	if len(prefix) > 40 {
		prefix = prefix[:40]
	}
	ctx := context.Background()
	ns, err := c.Kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{
		GenerateName: prefix + "-",
		Labels:       map[string]string{NamespaceLabel: "true"},
	}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s-*: %v", prefix, err)
	}
	name := ns.Name
	t.Cleanup(func() {
		err := c.Kube.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting namespace %s: %v", name, err)
		}
	})
	Eventually(t, 60*time.Second, 250*time.Millisecond, func() (bool, string) {
		_, err := c.Kube.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		if err != nil {
			return false, fmt.Sprintf("ServiceAccount default in namespace %s: %v (kube-controller-manager makes it)", name, err)
		}
		return true, ""
	})
	return name
}
