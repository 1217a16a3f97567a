package framework

import (
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

// Main runs the tests of m on a cluster, and is what a test package's
// TestMain calls: func TestMain(m *testing.M) { framework.Main(m) }.
//
//   - With E2E_CLUSTER_ENV set, the tests attach to that running cluster.
//   - Otherwise Main brings one up (BringUp; as root, with the binaries of
//     `scripts/e2e.sh --build`), runs the tests, and stops it again. E2E_WORK
//     names its directory (kept, it is the caller's; default a new one,
//     deleted when every test passed), E2E_BIN_DIR the binaries (default
//     .bin beside the package), RAY_WEBHOOK_BIN the server (default
//     build/ray-webhook of the source tree), E2E_POD_CIDR the Pod range,
//     E2E_IMAGE the image's OCI archive, pushed to the suite's registry,
//     signed, verified and pulled by digest for the replicas to run (default
//     none: they run the binary).
//     With E2E_KEEP=1 the cluster is left running (WORK/stop.sh stops it).
//     A SIGINT or SIGTERM stops the cluster before the binary exits.
//   - When the binary was started as this framework's in-namespace HTTP
//     client (HTTPGetInNetns without curl), it does that job and exits.
func Main(m interface{ Run() int }) {
	if os.Getenv(helperEnv) == "httpget" {
		os.Exit(helperGet(os.Getenv(helperURL)))
	}
	if os.Getenv(EnvVar) != "" {
		os.Exit(m.Run())
	}
	os.Exit(runOnNewCluster(m))
}

func runOnNewCluster(m interface{ Run() int }) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "framework:", err)
		return 1
	}
	// The package directory is tests/e2e of the source tree.
	e2eDir := wd
	repo := filepath.Dir(filepath.Dir(e2eDir))
	keep := os.Getenv("E2E_KEEP") == "1"
	callerWork := os.Getenv("E2E_WORK")
	r, err := BringUp(BringUpOptions{
		Repo:       repo,
		E2EDir:     e2eDir,
		Bin:        os.Getenv("E2E_BIN_DIR"),
		RayWebhook: os.Getenv("RAY_WEBHOOK_BIN"),
		Work:       callerWork,
		PodCIDR:    os.Getenv("E2E_POD_CIDR"),
		Image:      os.Getenv("E2E_IMAGE"),
		Detached:   keep,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "framework: the cluster did not come up:", err)
		return 1
	}
	os.Setenv(EnvVar, r.ClusterEnv)
	inProcess.Lock()
	inProcess.r = r
	inProcess.Unlock()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		s := <-signals
		fmt.Fprintf(os.Stderr, "framework: %v: stopping the cluster\n", s)
		r.Stop(true)
		os.Exit(130)
	}()
	code := m.Run()
	signal.Stop(signals)
	switch {
	case keep:
		r.Detach()
		fmt.Fprintf(os.Stderr, "framework: the cluster keeps running: E2E_CLUSTER_ENV=%s; stop it with %s\n",
			r.ClusterEnv, filepath.Join(r.Work, "stop.sh"))
	default:
		r.Stop(code != 0 || callerWork != "")
		if code != 0 && callerWork == "" {
			fmt.Fprintln(os.Stderr, "framework: logs kept in", filepath.Join(r.Work, "logs"))
		}
	}
	return code
}
