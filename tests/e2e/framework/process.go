package framework

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Process is a program a test started; it logs to Log and is stopped when
// the test ends.
type Process struct {
	Name string
	Log  string
	d    *daemon
	once sync.Once
}

var (
	logSeqMu sync.Mutex
	logSeq   = map[string]int{}
)

// logFile is LOGS/go-NAME-N.log, N counting the processes of that name.
func logFile(c *Cluster, name string) string {
	logSeqMu.Lock()
	defer logSeqMu.Unlock()
	logSeq[name]++
	return filepath.Join(c.Logs, fmt.Sprintf("go-%s-%d.log", name, logSeq[name]))
}

// start runs cmd with its output in LOGS/go-NAME-N.log (after a line naming
// the command) and stops it when t ends. It stays in the test's process
// group: a ^C of go test (which runs no cleanup) stops it too.
func start(t testing.TB, c *Cluster, name string, cmd *exec.Cmd) *Process {
	t.Helper()
	log := logFile(c, name)
	d, err := launch(name, log, cmd, false, fmt.Sprintf("# %s: %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(cmd.Args, " ")))
	if err != nil {
		t.Fatalf("%v (%s)", err, cmd.Path)
	}
	p := &Process{Name: name, Log: log, d: d}
	t.Cleanup(p.Stop)
	return p
}

// Exited says whether the process has ended.
func (p *Process) Exited() bool { return p.d.exited() }

// Pid is the process id.
func (p *Process) Pid() int { return p.d.cmd.Process.Pid }

// Stop sends SIGTERM, waits at most 40 s, then SIGKILL; it is idempotent.
func (p *Process) Stop() { p.once.Do(p.d.stop) }

// Tail is the end of the process's log (at most n lines).
func (p *Process) Tail(n int) string {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	return lastLines(string(b), n)
}

// exitReason describes how the process ended.
func (p *Process) exitReason() string {
	if p.d.err == nil {
		return "exited with status 0"
	}
	return p.d.err.Error()
}

// waitHTTP waits until GET url answers 200, failing t when timeout passes or
// the process exits first (with the end of its log).
func waitHTTP(t testing.TB, p *Process, url string, timeout time.Duration) {
	t.Helper()
	if err := p.d.waitReady(plainProbe(url), timeout); err != nil {
		t.Fatal(err)
	}
}

// freePort is a TCP port nobody listens on at ip (the kernel's pick).
func freePort(t testing.TB, ip string) int {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatalf("no free port on %s: %v", ip, err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// run runs a command to its end and returns its combined output.
func run(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	if env != nil {
		cmd.Env = env
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(lastLines(out.String(), 10)))
	}
	return out.String(), nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// kubectl runs KUBECTL --kubeconfig KUBECONFIG ARGS.
func (c *Cluster) kubectl(ctx context.Context, args ...string) (string, error) {
	return run(ctx, nil, c.Kubectl, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
}

func itoa(n int) string { return strconv.Itoa(n) }

// FreePort is a TCP port nobody listens on at IP right now (the kernel's pick).
func FreePort(t testing.TB, ip string) int {
	t.Helper()
	return freePort(t, ip)
}
