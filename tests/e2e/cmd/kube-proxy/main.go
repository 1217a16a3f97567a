// Command kube-proxy is the network proxy of k8s.io/kubernetes (the version
// pinned in ../../go.mod), built here so that the end-to-end cluster routes
// ClusterIP Services as a real node does (framework.BringUp runs it for the
// KWOK node). It does what k8s.io/kubernetes/cmd/kube-proxy/proxy.go does:
// build the cobra command of cmd/kube-proxy/app and hand it to
// component-base's cli.Run.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	// Registers the client-go metrics and the version metric, as the upstream
	// binary does, so /metrics carries the same families.
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-proxy/app"
)

func main() {
	os.Exit(cli.Run(app.NewProxyCommand()))
}
