package framework

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// KubectlResult is what one kubectl run printed, and how it ended.
type KubectlResult struct {
	Stdout, Stderr string
	Err            error // nil when kubectl exited 0
}

// Combined is stdout then stderr, as a terminal shows them.
func (r KubectlResult) Combined() string { return r.Stdout + r.Stderr }

// Kubectl runs KUBECTL --kubeconfig KUBECONFIG ARGS (stdin STDIN, at most 2
// minutes) and returns what it printed; an exit status other than 0 is in
// Err, not a failure of t: what kubectl tells a user (a `Warning:` line, an
// `Error from server (...)`) is what many checks assert on.
func Kubectl(t testing.TB, stdin string, args ...string) KubectlResult {
	t.Helper()
	c := Attach(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Kubectl, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	return KubectlResult{Stdout: out.String(), Stderr: errOut.String(), Err: err}
}

// MustKubectl is Kubectl that fails t unless kubectl exits 0.
func MustKubectl(t testing.TB, stdin string, args ...string) string {
	t.Helper()
	r := Kubectl(t, stdin, args...)
	if r.Err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), r.Err, lastLines(r.Combined(), 15))
	}
	return r.Stdout
}
