// Command e2e-cluster brings the end-to-end cluster up and leaves it running,
// or stops one, with the framework's BringUp (scripts/e2e.sh --up and --keep):
//
//	e2e-cluster up --repo DIR [--work DIR] [--bin DIR] [--ray-webhook FILE] [--pod-cidr CIDR] [--image OCI_ARCHIVE]
//	                [--apiserver-profiling]
//	e2e-cluster operator --work DIR --release kuberay-v1.6.2
//	e2e-cluster down --work DIR [--keep-work]
//
// up prints the cluster.env it wrote on its last line.
package main

import (
	"flag"
	"fmt"
	"os"

	"ray-webhook/tests/e2e/framework"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: e2e-cluster up|operator|down [flags]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("e2e-cluster "+os.Args[1], flag.ExitOnError)
	repo := fs.String("repo", "", "the source tree")
	work := fs.String("work", "", "the cluster's directory")
	bin := fs.String("bin", "", "the Go binaries (default REPO/tests/e2e/.bin)")
	server := fs.String("ray-webhook", "", "the server binary (default REPO/build/ray-webhook)")
	podCIDR := fs.String("pod-cidr", "", "KWOK's Pod range (default the first free /22 of 10.200.64.0/18)")
	image := fs.String("image", "", "ray-webhook's OCI archive to run the replicas from (default: the binary)")
	profiling := fs.Bool("apiserver-profiling", false, "serve kube-apiserver's /debug/pprof")
	release := fs.String("release", "", "the operator to leave running (a tests/e2e/kuberay-* folder)")
	keepWork := fs.Bool("keep-work", false, "down: keep the directory (its logs)")
	_ = fs.Parse(os.Args[2:])
	var err error
	switch os.Args[1] {
	case "up":
		var r *framework.Running
		r, err = framework.BringUp(framework.BringUpOptions{Repo: *repo, Bin: *bin, RayWebhook: *server,
			Work: *work, PodCIDR: *podCIDR, Image: *image, Detached: true,
			APIServerProfiling: *profiling})
		if err == nil {
			r.Detach()
			fmt.Println(r.ClusterEnv)
		}
	case "operator":
		err = framework.KeepOperator(*work, *release)
	case "down":
		err = framework.StopRecorded(*work, *keepWork)
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e-cluster:", err)
		os.Exit(1)
	}
}
