package framework

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// RunInTestHost runs argv on the test host (network namespace NETNS) with
// resolvConf as its /etc/resolv.conf (written as Resolve does, put back
// afterwards), for at most timeout, and returns its combined output and
// error: a program a person runs from a machine that reaches the cluster.
func RunInTestHost(t testing.TB, resolvConf string, timeout time.Duration, argv ...string) (string, error) {
	t.Helper()
	c := Attach(t)
	var out string
	err := withResolvConf(t, c, resolvConf, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		var err error
		out, err = run(ctx, nil, "ip", append([]string{"netns", "exec", c.NetNS}, argv...)...)
		return err
	})
	return out, err
}

// RayCommand is the path of command NAME (ray, python) of Ray's environment RAY_VENV.
func RayCommand(t testing.TB, name string) string {
	t.Helper()
	c := Attach(t)
	path := strings.TrimRight(c.Env["RAY_VENV"], "/") + "/bin/" + name
	if _, err := exec.LookPath(path); err != nil {
		t.Fatalf("RayCommand(%s): %v (cluster.env RAY_VENV; scripts/install-deps.sh --test installs Ray)", name, err)
	}
	return path
}
