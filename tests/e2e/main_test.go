// Package e2e is the Go end-to-end suite of ray-webhook: scenarios on a whole
// cluster (kube-apiserver, kube-controller-manager, kube-scheduler, KWOK,
// CoreDNS, the Ray stand-in, ray-webhook from deploy/) that framework.Main
// brings up before the tests and stops after them:
//
//	bash scripts/e2e.sh --build          # the binaries, into tests/e2e/.bin
//	cd tests/e2e && go test -p 1 -v -timeout 45m .
//
// or, on a cluster left running by `scripts/e2e.sh --up`, with
// E2E_CLUSTER_ENV naming its cluster.env.
//
// One file per scenario group; every check makes its own namespace, and
// asserts on API objects, DNS answers and HTTP answers, not on logs.
package e2e

import (
	"testing"

	"ray-webhook/tests/e2e/framework"
)

// TestMain brings the cluster up (or attaches to one) around the tests; the
// binary also doubles as framework's in-namespace HTTP client.
func TestMain(m *testing.M) { framework.Main(m) }
