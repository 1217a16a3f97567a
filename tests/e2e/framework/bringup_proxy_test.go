package framework

import "testing"

func TestProxyOwnerRoundTrip(t *testing.T) {
	o := proxyOwner{pid: 4242, start: "123456", mode: "nftables", bin: "/src/tests/e2e/.bin/kube-proxy", work: "/tmp/ray-webhook-e2e.x"}
	got, ok := parseProxyOwner(o.String())
	if !ok || got != o {
		t.Fatalf("parseProxyOwner(%q) = %+v %v, want %+v", o.String(), got, ok, o)
	}
	for _, bad := range []string{"", "pid=4242\n", "pid=1\nstart=5\nmode=nftables\nwork=/w\n",
		"pid=9\nstart=-\nmode=nftables\nwork=/w\n", "pid=9\nstart=5\nmode=ipvs\nwork=/w\n", "pid=9\nstart=5\nmode=iptables\n"} {
		if o, ok := parseProxyOwner(bad); ok {
			t.Errorf("parseProxyOwner(%q) = %+v, accepted", bad, o)
		}
	}
}

func TestKernelAtLeast(t *testing.T) {
	for release, want := range map[string]bool{
		"6.1.0-18-amd64\n": true, "5.13.0": true, "5.15.0-91-generic": true, "5.10.0-28-amd64": false,
		"4.19.0": false, "6.18.44-fc-v1272": true, "": false, "garbage": false,
	} {
		if got := kernelAtLeast(release, 5, 13); got != want {
			t.Errorf("kernelAtLeast(%q, 5, 13) = %v, want %v", release, got, want)
		}
	}
}
