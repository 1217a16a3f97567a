// Command kube-apiserver is the Kubernetes API server of k8s.io/kubernetes
// (the version pinned in ../../go.mod), built here so that the end-to-end
// suite (scripts/e2e.sh) can run it without a container engine. It does what
// k8s.io/kubernetes/cmd/kube-apiserver/apiserver.go does: build the cobra
// command of cmd/kube-apiserver/app and hand it to component-base's cli.Run.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	// Registers the client-go metrics and the version metric, as the upstream
	// binary does, so /metrics carries the same families.
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

func main() {
	os.Exit(cli.Run(app.NewAPIServerCommand()))
}
