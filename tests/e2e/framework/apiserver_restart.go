package framework

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// inProcess is the cluster this test process brought up (Main), the only one
// whose processes a test can restart.
var inProcess struct {
	sync.Mutex
	r *Running
}

// RestartAPIServer stops kube-apiserver as a node restarts a static Pod
// (SIGTERM, SIGKILL after the kubelet's default grace of 30 s), starts it
// again with the same command line, environment and log, and waits until it
// answers /readyz. It returns how long the API server was away, and how it
// ended ("exited after 3.1s", "killed after 30s"). The new process takes the old one's
// place among the cluster's (stopped with it, recorded in WORK/processes).
// Only for a cluster this test process brought up.
func RestartAPIServer(t testing.TB) (away time.Duration, ended string) {
	t.Helper()
	c := Attach(t)
	inProcess.Lock()
	r := inProcess.r
	inProcess.Unlock()
	if r == nil {
		t.Fatalf("RestartAPIServer: the cluster was not brought up by this test process (E2E_CLUSTER_ENV)")
	}
	r.procsMu.Lock()
	at := -1
	for i, d := range r.procs {
		if d.name == "kube-apiserver" {
			at = i
		}
	}
	r.procsMu.Unlock()
	if at < 0 {
		t.Fatalf("RestartAPIServer: no kube-apiserver among the cluster's processes")
	}
	old := r.procs[at]
	stopped := time.Now()
	_ = old.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-old.done:
		ended = fmt.Sprintf("exited after %v", time.Since(stopped).Round(100*time.Millisecond))
	case <-time.After(30 * time.Second):
		_ = old.cmd.Process.Kill()
		<-old.done
		ended = "killed after 30s"
	}
	cmd := exec.Command(old.cmd.Path, old.cmd.Args[1:]...)
	cmd.Env, cmd.Dir = old.cmd.Env, old.cmd.Dir
	d, err := r.spawnCmd("kube-apiserver", cmd)
	if err != nil {
		t.Fatalf("RestartAPIServer: %v", err)
	}
	r.procsMu.Lock()
	r.procs[at] = d
	r.procsMu.Unlock()
	if err := r.recordProcesses(); err != nil {
		t.Errorf("RestartAPIServer: recording the new process: %v", err)
	}
	Eventually(t, 2*time.Minute, 200*time.Millisecond, func() (bool, string) {
		if d.exited() {
			t.Fatalf("RestartAPIServer: kube-apiserver exited (%v); the end of %s:\n%s", d.err, d.log, d.tail())
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		body, err := c.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err == nil, fmt.Sprintf("kube-apiserver /readyz: %v %s", err, body)
	})
	return time.Since(stopped), ended
}
