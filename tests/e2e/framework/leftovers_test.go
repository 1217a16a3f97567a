package framework

import (
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func readFixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestParseRoutes(t *testing.T) {
	routes := parseRoutes(readFixture(t, "routes-with-leftover.txt"))
	var local []string
	for _, rt := range routes {
		if rt.kind == "local" && rt.dev == "lo" {
			local = append(local, rt.dst.String())
		}
	}
	want := []string{"10.200.64.0/22", "127.0.0.0/8", "127.0.0.1/32"}
	if len(local) != len(want) {
		t.Fatalf("local routes on lo: %v, want %v", local, want)
	}
	for i := range want {
		if local[i] != want[i] {
			t.Errorf("local route %d: %s, want %s", i, local[i], want[i])
		}
	}
	for _, rt := range routes {
		if rt.dst.String() == "10.200.0.0/29" && (rt.kind != "unicast" || rt.dev != "rwe2e27274h") {
			t.Errorf("the veth's link route read as %v", rt)
		}
	}
}

func TestFreePodRange(t *testing.T) {
	routes := parseRoutes(readFixture(t, "routes-with-leftover.txt"))
	got, ok := freePodRange(routes)
	if !ok || got.String() != "10.200.68.0/22" {
		t.Errorf("free range beside a routed 10.200.64.0/22: %v %v, want 10.200.68.0/22", got, ok)
	}
	got, ok = freePodRange(nil)
	if !ok || got.String() != "10.200.64.0/22" {
		t.Errorf("free range on a clean machine: %v %v, want 10.200.64.0/22", got, ok)
	}
	// A wider route over the start of the pool takes every /22 it covers.
	got, _ = freePodRange(parseRoutes("10.200.64.0/19 dev eth1 proto kernel scope link\n"))
	if got.String() != "10.200.96.0/22" {
		t.Errorf("free range beside 10.200.64.0/19: %v, want 10.200.96.0/22", got)
	}
	var all []route
	for _, p := range podRanges() {
		all = append(all, route{kind: "local", dst: p, dev: "lo"})
	}
	if got, ok := freePodRange(all); ok {
		t.Errorf("every range routed, yet %v was free", got)
	}
	if n := len(podRanges()); n != 16 {
		t.Errorf("the pool has %d /22s, want 16", n)
	}
	last := podRanges()[15]
	if last.String() != "10.200.124.0/22" || last.Overlaps(netip.MustParsePrefix(serviceRange)) {
		t.Errorf("the pool's last range %v (it must end below the services' %s)", last, serviceRange)
	}
}

func TestIsPoolRange(t *testing.T) {
	for cidr, want := range map[string]bool{
		"10.200.64.0/22": true, "10.200.124.0/22": true,
		"10.200.128.0/22": false, "10.200.64.0/24": false, "10.0.0.0/22": false,
	} {
		if got := isPoolRange(netip.MustParsePrefix(cidr)); got != want {
			t.Errorf("isPoolRange(%s) = %v, want %v", cidr, got, want)
		}
	}
}

func TestParseBoundAddresses(t *testing.T) {
	bound := parseBoundAddresses(readFixture(t, "proc-net-udp.txt"), false, true)
	for _, a := range []string{"127.0.0.1", "10.200.0.3", "0.0.0.0"} {
		if !bound[netip.MustParseAddr(a)] {
			t.Errorf("%s is bound in the fixture but was not read", a)
		}
	}
	if bound[netip.MustParseAddr("10.200.0.1")] {
		t.Errorf("10.200.0.1 has no socket in the fixture")
	}
	// The same hexadecimal on a big-endian machine is the address reversed.
	if !parseBoundAddresses(readFixture(t, "proc-net-udp.txt"), false, false)[netip.MustParseAddr("3.0.200.10")] {
		t.Errorf("big-endian reading of 0300C80A is not 3.0.200.10")
	}
	// TCP: a listener counts, a connection left in TIME_WAIT by a killed server does not.
	tcp := parseBoundAddresses(readFixture(t, "proc-net-tcp.txt"), true, true)
	if !tcp[netip.MustParseAddr("10.200.0.1")] {
		t.Errorf("the listener on 10.200.0.1 was not read")
	}
	if tcp[netip.MustParseAddr("10.200.0.17")] {
		t.Errorf("10.200.0.17 has only a TIME_WAIT connection, yet it counts as listening")
	}
}

func TestLeftoverNamespace(t *testing.T) {
	host := []netip.Addr{netip.MustParseAddr("10.200.0.1"), netip.MustParseAddr("10.200.0.3")}
	coreDNS := map[netip.Addr]bool{netip.MustParseAddr("10.200.0.3"): true}
	cases := []struct {
		name  string
		age   time.Duration
		addrs []netip.Addr
		bound map[netip.Addr]bool
		want  bool
	}{
		{"old, nothing listens", time.Hour, host, nil, true},
		{"old, CoreDNS listens", time.Hour, host, coreDNS, false},
		{"young: its bring-up may still be starting", time.Minute, host, nil, false},
		{"old, its host end gone", time.Hour, nil, coreDNS, true},
	}
	for _, c := range cases {
		if got := leftoverNamespace(c.age, c.addrs, c.bound); got != c.want {
			t.Errorf("%s: leftover %v, want %v", c.name, got, c.want)
		}
	}
}
