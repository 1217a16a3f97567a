package framework

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// What a bring-up leaves on the machine besides its processes: a network
// namespace rwe2e-PID (with its veth pair) and a local route for its Pod
// range. Running.Stop and `e2e-cluster down` remove both; a run that is
// killed (a session's end, SIGKILL, a lost machine) cannot. removeLeftovers
// takes them back at the next bring-up, so a killed run never stops the
// next one: a namespace is a leftover when it is older than leftoverAge and
// nothing listens on its host end's addresses (ray-webhook and CoreDNS of a
// live cluster do, detached ones included; sockets are per network namespace,
// so this holds whatever PID namespace the run had); a local route of the
// pool is a leftover when no remaining namespace routes to it. The Pod
// namespaces and the guard table of a test binary that is gone go too
// (removePodLeftovers). kube-proxy's
// rules are a leftover when the process kubeProxyOwner names is gone
// (removeKubeProxyLeftover).

// podRangePool is where BringUp takes a Pod range from (a free /22), below
// serviceRange.
const (
	podRangePool = "10.200.64.0/18"
	podRangeBits = 22
	netnsPrefix  = "rwe2e-"
	leftoverAge  = 10 * time.Minute
	tcpListen    = "0A" // TCP_LISTEN in the st column of /proc/net/tcp
)

// route is one line of `ip -4 route show table all`.
type route struct {
	kind string // local, broadcast, ...; "unicast" when the line names none
	dst  netip.Prefix
	dev  string
}

func (r route) String() string {
	s := r.kind + " " + r.dst.String()
	if r.dev != "" {
		s += " dev " + r.dev
	}
	return s
}

var routeKinds = map[string]bool{"unicast": true, "local": true, "broadcast": true, "multicast": true,
	"throw": true, "unreachable": true, "prohibit": true, "blackhole": true, "nat": true, "anycast": true}

// parseRoutes reads the output of `ip -4 route show`; a line it cannot read
// ("default" included: it is no range of ours) is left out.
func parseRoutes(out string) []route {
	var routes []route
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		rt := route{kind: "unicast"}
		if routeKinds[f[0]] {
			rt.kind, f = f[0], f[1:]
		}
		if len(f) == 0 {
			continue
		}
		dst, err := netip.ParsePrefix(f[0])
		if err != nil {
			a, err := netip.ParseAddr(f[0])
			if err != nil {
				continue
			}
			dst = netip.PrefixFrom(a, a.BitLen())
		}
		rt.dst = dst.Masked()
		for i := 1; i+1 < len(f); i++ {
			if f[i] == "dev" {
				rt.dev = f[i+1]
			}
		}
		routes = append(routes, rt)
	}
	return routes
}

// overlapping is the first route whose destination overlaps cidr.
func overlapping(routes []route, cidr netip.Prefix) (route, bool) {
	for _, rt := range routes {
		if rt.dst.Overlaps(cidr) {
			return rt, true
		}
	}
	return route{}, false
}

// podRanges are the /22s of podRangePool, in order.
func podRanges() []netip.Prefix {
	pool := netip.MustParsePrefix(podRangePool)
	var out []netip.Prefix
	step := uint32(1) << (32 - podRangeBits)
	b := pool.Addr().As4()
	base := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	for i := uint32(0); i < 1<<(podRangeBits-pool.Bits()); i++ {
		a := base + i*step
		out = append(out, netip.PrefixFrom(netip.AddrFrom4([4]byte{byte(a >> 24), byte(a >> 16), byte(a >> 8), byte(a)}), podRangeBits))
	}
	return out
}

// freePodRange is the first /22 of the pool that no route overlaps.
func freePodRange(routes []route) (netip.Prefix, bool) {
	for _, p := range podRanges() {
		if _, used := overlapping(routes, p); !used {
			return p, true
		}
	}
	return netip.Prefix{}, false
}

// isPoolRange says whether p is one of the ranges BringUp takes.
func isPoolRange(p netip.Prefix) bool {
	return p.Bits() == podRangeBits && netip.MustParsePrefix(podRangePool).Contains(p.Addr())
}

// parseBoundAddresses reads /proc/net/{tcp,udp}: the local IPv4 address of
// every socket (with listenOnly, of every listening one: a dead server's
// connections linger in TIME_WAIT), written as the kernel's hexadecimal of the
// address in host byte order (0100007F:0035 is 127.0.0.1:53 on a
// little-endian machine).
func parseBoundAddresses(table string, listenOnly, littleEndian bool) map[netip.Addr]bool {
	bound := map[netip.Addr]bool{}
	for _, line := range strings.Split(table, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[0] == "sl" || listenOnly && f[3] != tcpListen {
			continue
		}
		hexAddr, _, ok := strings.Cut(f[1], ":")
		if !ok || len(hexAddr) != 8 {
			continue
		}
		v, err := strconv.ParseUint(hexAddr, 16, 32)
		if err != nil {
			continue
		}
		b := [4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
		if littleEndian {
			b = [4]byte{b[3], b[2], b[1], b[0]}
		}
		bound[netip.AddrFrom4(b)] = true
	}
	return bound
}

// leftoverNamespace says whether a namespace is a dead run's: old enough that
// its bring-up is over, and none of its host end's addresses has a socket.
func leftoverNamespace(age time.Duration, hostAddrs []netip.Addr, bound map[netip.Addr]bool) bool {
	if age < leftoverAge {
		return false
	}
	for _, a := range hostAddrs {
		if bound[a] {
			return false
		}
	}
	return true
}

// hostRoutes is every IPv4 route of this network namespace, all tables.
func hostRoutes() ([]route, error) {
	out, err := exec.Command("ip", "-4", "route", "show", "table", "all").Output()
	if err != nil {
		return nil, fmt.Errorf("ip -4 route show table all: %v", err)
	}
	return parseRoutes(string(out)), nil
}

// boundAddresses are the local addresses of this network namespace's
// listening IPv4 TCP sockets and its bound UDP ones.
func boundAddresses() map[netip.Addr]bool {
	bound := map[netip.Addr]bool{}
	for f, listenOnly := range map[string]bool{"/proc/net/tcp": true, "/proc/net/udp": false} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for a := range parseBoundAddresses(string(b), listenOnly, hostLittleEndian()) {
			bound[a] = true
		}
	}
	return bound
}

func hostLittleEndian() bool {
	return binary.NativeEndian.Uint16([]byte{1, 0}) == 1
}

// ipv4Addrs are the IPv4 addresses of device dev, of every device when dev is
// "" (none when dev is gone).
func ipv4Addrs(dev string) []netip.Addr {
	args := []string{"-4", "-o", "addr", "show"}
	if dev != "" {
		args = append(args, "dev", dev)
	}
	out, err := exec.Command("ip", args...).Output()
	if err != nil {
		return nil
	}
	var addrs []netip.Addr
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "inet" {
				if p, err := netip.ParsePrefix(f[i+1]); err == nil {
					addrs = append(addrs, p.Addr())
				}
			}
		}
	}
	return addrs
}

// removeLeftovers removes the namespaces and Pod ranges of runs that are
// gone, and says what it removed. It never fails a bring-up: what it cannot
// remove only leaves fewer free ranges (makePodRange then takes another).
func (r *Running) removeLeftovers() {
	r.removeKubeProxyLeftover()
	removePodLeftovers(r.logf)
	out, _ := exec.Command("ip", "netns", "list").Output()
	bound := boundAddresses()
	var live []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], netnsPrefix) {
			continue
		}
		ns := f[0]
		st, err := os.Stat(filepath.Join("/run/netns", ns))
		if err != nil {
			continue
		}
		hostIf := "rwe2e" + strings.TrimPrefix(ns, netnsPrefix) + "h"
		if !leftoverNamespace(time.Since(st.ModTime()), ipv4Addrs(hostIf), bound) {
			live = append(live, ns)
			continue
		}
		if err := ip("netns", "del", ns); err != nil {
			r.logf("a dead run's network namespace %s stays: %v", ns, err)
			live = append(live, ns)
			continue
		}
		os.RemoveAll("/etc/netns/" + ns)
		r.logf("removed network namespace %s, left by a run that is gone (nothing listens on %s's addresses)", ns, hostIf)
	}
	// The Pod ranges the live namespaces route to are in use.
	claimed := map[netip.Prefix]bool{}
	for _, ns := range live {
		out, _ := exec.Command("ip", "netns", "exec", ns, "ip", "-4", "route", "show").Output()
		for _, rt := range parseRoutes(string(out)) {
			claimed[rt.dst] = true
		}
	}
	routes, err := hostRoutes()
	if err != nil {
		return
	}
	for _, rt := range routes {
		if rt.kind != "local" || rt.dev != "lo" || !isPoolRange(rt.dst) || claimed[rt.dst] {
			continue
		}
		if err := ip("route", "del", "local", rt.dst.String(), "dev", "lo"); err != nil {
			r.logf("a dead run's Pod range %s stays: %v", rt.dst, err)
			continue
		}
		r.logf("removed the local route of Pod range %s, left by a run that is gone (no network namespace routes to it)", rt.dst)
	}
}

// removeKubeProxyLeftover removes the kube-proxy rules of a run that is gone:
// kubeProxyOwner names a process that no longer runs (a killed run's
// kube-proxy, or the bring-up that was about to start it). The rules are the
// mode's own, whichever cluster they served, and while that process ran no
// other cluster of the suite started a kube-proxy, so they are all its. An
// owner file that cannot be read is removed once older than leftoverAge.
func (r *Running) removeKubeProxyLeftover() {
	o, ok, exists := readProxyOwner()
	if !exists {
		return
	}
	if !ok {
		if st, err := os.Stat(kubeProxyOwner); err == nil && time.Since(st.ModTime()) > leftoverAge {
			os.Remove(kubeProxyOwner)
			r.logf("removed %s, unreadable and %v old", kubeProxyOwner, time.Since(st.ModTime()).Round(time.Second))
		}
		return
	}
	if o.alive() {
		return
	}
	if err := removeProxyRules(o); err != nil {
		r.logf("the kube-proxy rules of a run that is gone (%s) stay: %v", o.work, err)
		return
	}
	os.Remove(kubeProxyOwner)
	r.logf("removed the kube-proxy rules (%s mode) of the cluster in %s, a run that is gone (pid %d no longer runs)", o.mode, o.work, o.pid)
}
