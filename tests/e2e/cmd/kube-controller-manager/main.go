// Command kube-controller-manager is the controller manager of
// k8s.io/kubernetes (the version pinned in ../../go.mod), as
// k8s.io/kubernetes/cmd/kube-controller-manager/controller-manager.go builds
// it. In the end-to-end cluster its controllers make the default
// ServiceAccounts, the EndpointSlices of Ray head Services, the Pods of the
// Jobs a RayJob submits, and collect what an owner deletion leaves.
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zones, as upstream

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/version"
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
