// Package e2e is the Go end-to-end suite of ray-webhook: scenarios on the
// cluster scripts/e2e.sh brings up (kube-apiserver, kube-controller-manager,
// kube-scheduler, KWOK, CoreDNS, the Ray stand-in, ray-webhook from deploy/),
// attached to through framework (E2E_CLUSTER_ENV names its cluster.env):
//
//	bash scripts/e2e.sh --up     # prints where cluster.env is
//	cd tests/e2e && E2E_CLUSTER_ENV=/tmp/ray-webhook-e2e.XXXXXX/cluster.env go test -p 1 -v -timeout 30m .
//
// One file per scenario group; every check makes its own namespace, and
// asserts on API objects, DNS answers and HTTP answers, not on logs.
package e2e

import (
	"testing"

	"ray-webhook/tests/e2e/framework"
)

// TestMain lets the test binary double as framework's in-namespace HTTP client.
func TestMain(m *testing.M) { framework.Main(m) }
