package framework

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// StartCoreDNS starts BIN/coredns serving ZONE on IP:53 from the API server
// (the kubernetes plugin with the admin KUBECONFIG; every other name is
// refused, nothing is forwarded):
//
//	ZONE:53 {
//	    bind IP
//	    errors
//	    kubernetes ZONE {
//	        kubeconfig KUBECONFIG
//	    }
//	}
//
// It returns once a query for kubernetes.default.svc.ZONE sent to IP:53 gets
// an answer (an address or NXDOMAIN), and stops CoreDNS when t ends.
func StartCoreDNS(t testing.TB, zone, ip string) *Process {
	t.Helper()
	c := Attach(t)
	zone = strings.TrimSuffix(zone, ".")
	dir := t.TempDir()
	corefile := filepath.Join(dir, "Corefile")
	conf := fmt.Sprintf("%s:53 {\n    bind %s\n    errors\n    kubernetes %s {\n        kubeconfig %s\n    }\n}\n",
		zone, ip, zone, c.Kubeconfig)
	if err := os.WriteFile(corefile, []byte(conf), 0o644); err != nil {
		t.Fatalf("%v", err)
	}
	p := start(t, c, "coredns-"+zone, exec.Command(filepath.Join(c.Bin, "coredns"), "-conf", corefile))
	probe := "kubernetes.default.svc." + zone + "."
	reason, ok := poll1(60*time.Second, 250*time.Millisecond, func() (bool, string) {
		if p.Exited() {
			return true, ""
		}
		_, err := LookupAt(ip, probe)
		var dnsErr *net.DNSError
		if err == nil || (errors.As(err, &dnsErr) && dnsErr.IsNotFound) {
			return true, ""
		}
		return false, err.Error()
	})
	if p.Exited() {
		t.Fatalf("CoreDNS for %s on %s:53 %s; the end of %s:\n%s", zone, ip, p.exitReason(), p.Log, p.Tail(25))
	}
	if !ok {
		t.Fatalf("CoreDNS for %s on %s:53 does not answer (%s); the end of %s:\n%s", zone, ip, reason, p.Log, p.Tail(25))
	}
	t.Logf("CoreDNS for zone %s on %s:53 (pid %d, log %s)", zone, ip, p.Pid(), p.Log)
	return p
}

// LookupAt asks the DNS server at IP:53 (and nothing else) for the A records
// of the fully qualified NAME, from this process (the host's network
// namespace), with Go's resolver.
func LookupAt(ip, name string) ([]string, error) {
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort(ip, "53"))
	}}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if !strings.HasSuffix(name, ".") {
		name += "."
	}
	return r.LookupHost(ctx, name)
}
