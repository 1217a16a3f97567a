// Command kube-scheduler is the Kubernetes scheduler of k8s.io/kubernetes (the
// version pinned in ../../go.mod, the API server's own), as
// k8s.io/kubernetes/cmd/kube-scheduler/scheduler.go builds it. In the
// end-to-end cluster it binds Pods to KWOK's simulated nodes.
package main

import (
	"os"

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	os.Exit(cli.Run(app.NewSchedulerCommand()))
}
