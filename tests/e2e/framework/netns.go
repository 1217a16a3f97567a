package framework

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The test host is network namespace NETNS (peer address PEER_IP). `ip netns
// exec NETNS CMD` runs CMD there with every file of /etc/netns/NETNS/
// bind-mounted over /etc/, so /etc/netns/NETNS/resolv.conf is the test host's
// resolver configuration.

var resolvMu sync.Mutex

// withResolvConf writes /etc/netns/NETNS/resolv.conf = content for the
// duration of fn, then puts back what was there (or removes it), also when
// fn ends the goroutine (t.Fatal). Calls are serialised: one file, one test host.
func withResolvConf(t testing.TB, c *Cluster, content string, fn func() error) error {
	t.Helper()
	resolvMu.Lock()
	defer resolvMu.Unlock()
	dir := filepath.Join("/etc/netns", c.NetNS)
	path := filepath.Join(dir, "resolv.conf")
	old, readErr := os.ReadFile(path)
	restore := func() {
		if readErr == nil {
			_ = os.WriteFile(path, old, 0o644)
		} else {
			_ = os.Remove(path)
			_ = os.Remove(dir) // only when empty
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatalf("%v", err)
	}
	if !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatalf("writing %s: %v", path, err)
	}
	defer restore()
	return fn()
}

// Resolve looks NAME up on the test host as a program there would: it writes
// resolvConf (a whole resolv.conf, e.g. "nameserver 10.200.0.3\nsearch
// a.svc.cluster.local") to /etc/netns/NETNS/resolv.conf and runs `ip netns
// exec NETNS getent ahostsv4 NAME` (glibc's resolver: search list, ndots,
// /etc/hosts first as nsswitch.conf says). It returns the distinct IPv4
// addresses in getent's order, or an error when getent finds nothing (exit
// status 2) or fails. The file is put back as it was afterwards.
func Resolve(t testing.TB, resolvConf, name string) ([]string, error) {
	t.Helper()
	c := Attach(t)
	var addrs []string
	err := withResolvConf(t, c, resolvConf, func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, "ip", "netns", "exec", c.NetNS, "getent", "ahostsv4", name)
		out, err := cmd.Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) && ee.ExitCode() == 2 {
				return fmt.Errorf("getent ahostsv4 %s: not found (exit status 2)", name)
			}
			stderr := ""
			if ee != nil {
				stderr = strings.TrimSpace(string(ee.Stderr))
			}
			return fmt.Errorf("ip netns exec %s getent ahostsv4 %s: %v %s", c.NetNS, name, err, stderr)
		}
		seen := map[string]bool{}
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 || seen[f[0]] {
				continue
			}
			seen[f[0]] = true
			addrs = append(addrs, f[0])
		}
		if len(addrs) == 0 {
			return fmt.Errorf("getent ahostsv4 %s: no address in %q", name, out)
		}
		return nil
	})
	return addrs, err
}

// HTTPResponse is what HTTPGetInNetns got.
type HTTPResponse struct {
	Status int
	Body   []byte
}

// HTTPGetInNetns sends GET url from the test host: `ip netns exec NETNS curl`
// when curl is installed, else the test binary itself as a small Go client
// (that needs the package's TestMain to call framework.Main). A host name in
// url is resolved with resolvConf, written as Resolve does (empty: the file
// is left alone). It returns the status and body, or the error of the
// connection (a refused or timed-out dial, a name not found).
func HTTPGetInNetns(t testing.TB, resolvConf, url string) (HTTPResponse, error) {
	t.Helper()
	c := Attach(t)
	var resp HTTPResponse
	get := func() error {
		var err error
		resp, err = netnsGet(c, url)
		return err
	}
	if resolvConf == "" {
		return resp, get()
	}
	err := withResolvConf(t, c, resolvConf, get)
	return resp, err
}

const statusMarker = "\n--e2e-http-status:"

func netnsGet(c *Cluster, url string) (HTTPResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var cmd *exec.Cmd
	if curl, err := exec.LookPath("curl"); err == nil {
		cmd = exec.CommandContext(ctx, "ip", "netns", "exec", c.NetNS, curl, "-sS", "--noproxy", "*", "--max-time", "10",
			"-w", statusMarker+"%{http_code}", url)
	} else {
		self, err := os.Executable()
		if err != nil {
			return HTTPResponse{}, err
		}
		cmd = exec.CommandContext(ctx, "ip", "netns", "exec", c.NetNS, self)
		cmd.Env = append(os.Environ(), helperEnv+"=httpget", helperURL+"="+url)
	}
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			msg = strings.TrimSpace(string(ee.Stderr))
		}
		return HTTPResponse{}, fmt.Errorf("GET %s from %s: %v: %s", url, c.NetNS, err, msg)
	}
	i := strings.LastIndex(string(out), statusMarker)
	if i < 0 {
		return HTTPResponse{}, fmt.Errorf("GET %s from %s: no status in the output %q", url, c.NetNS, out)
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(out[i+len(statusMarker):])))
	if err != nil {
		return HTTPResponse{}, fmt.Errorf("GET %s: bad status in %q", url, out[i:])
	}
	return HTTPResponse{Status: code, Body: out[:i]}, nil
}

const (
	helperEnv = "E2E_FRAMEWORK_HELPER"
	helperURL = "E2E_FRAMEWORK_URL"
)

// helperGet prints the body and the status marker as curl -w does.
func helperGet(url string) int {
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy:       nil,
		DialContext: (&net.Dialer{Timeout: 5 * time.Second}).DialContext,
	}}
	resp, err := client.Get(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 7
	}
	defer resp.Body.Close()
	if _, err := io.Copy(os.Stdout, resp.Body); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 56
	}
	fmt.Printf("%s%d", statusMarker, resp.StatusCode)
	return 0
}
