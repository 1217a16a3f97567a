// Command kubectl is k8s.io/kubectl's command (the version pinned in
// ../../go.mod), built for the end-to-end suite. Like upstream's
// k8s.io/kubernetes/cmd/kubectl/kubectl.go it sets klog's verbosity from -v
// before the command is built, runs it with cli.RunNoErrOutput and prints an
// error the way kubectl does (util.CheckErr, which also sets the exit code).
package main

import (
	"os"

	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	"k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
)

func main() {
	_, _ = logs.GlogSetter(cmd.GetLogVerbosity(os.Args))
	if err := cli.RunNoErrOutput(cmd.NewDefaultKubectlCommand()); err != nil {
		util.CheckErr(err)
	}
}
