package framework

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is a program this framework started; it logs to Log.
type Process struct {
	Name string
	Log  string
	cmd  *exec.Cmd
	done chan struct{}
	err  error
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

// start runs cmd with its output in LOGS/go-NAME-N.log and stops it when t
// ends (SIGTERM, SIGKILL after 40 s).
func start(t testing.TB, c *Cluster, name string, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{Name: name, Log: logFile(c, name), cmd: cmd, done: make(chan struct{})}
	f, err := os.OpenFile(p.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatalf("%s: log file: %v", name, err)
	}
	fmt.Fprintf(f, "# %s: %s\n", time.Now().UTC().Format(time.RFC3339), strings.Join(cmd.Args, " "))
	cmd.Stdout, cmd.Stderr = f, f
	// The test's process group: a ^C of go test (which runs no cleanup)
	// stops it too.
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("starting %s (%s): %v", name, cmd.Path, err)
	}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	t.Cleanup(p.Stop)
	return p
}

// Exited says whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Stop sends SIGTERM, waits at most 40 s, then SIGKILL; it is idempotent.
func (p *Process) Stop() {
	p.once.Do(func() {
		if p.Exited() {
			return
		}
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(40 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}

// Tail is the end of the process's log (at most n lines).
func (p *Process) Tail(n int) string {
	b, err := os.ReadFile(p.Log)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// exitReason describes how the process ended.
func (p *Process) exitReason() string {
	if p.err == nil {
		return "exited with status 0"
	}
	return p.err.Error()
}

// waitHTTP waits until GET url answers 200, failing t when timeout passes or
// the process exits first (with the end of its log).
func waitHTTP(t testing.TB, p *Process, url string, timeout time.Duration) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	reason, ok := poll1(timeout, 250*time.Millisecond, func() (bool, string) {
		if p.Exited() {
			return true, "exited"
		}
		resp, err := client.Get(url)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, "status " + resp.Status
		}
		return true, ""
	})
	if p.Exited() {
		t.Fatalf("%s %s before %s answered; the end of %s:\n%s", p.Name, p.exitReason(), url, p.Log, p.Tail(25))
	}
	if !ok {
		t.Fatalf("%s: %s did not answer 200 within %v (%s); the end of %s:\n%s", p.Name, url, timeout, reason, p.Log, p.Tail(25))
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
