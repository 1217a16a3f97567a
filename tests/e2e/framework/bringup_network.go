package framework

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"strings"
)

// ip runs ip(8) with ARGS.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// makePodRange makes the Pod addresses KWOK hands out local to this machine:
// a route of type local for the whole range (any address in it is this host's
// own), so the Ray stand-in listens on each Pod's address and what dials a Pod
// reaches it. A range given (E2E_POD_CIDR) must be unrouted; otherwise the
// first free /22 of podRangePool is taken, so a second cluster on the machine
// (or one a killed run left) does not stop this one. The test host's route to
// the range is added first: that route is how removeLeftovers tells a range in
// use from one a dead run left.
func (r *Running) makePodRange() error {
	routes, err := hostRoutes()
	if err != nil {
		return err
	}
	var cidr netip.Prefix
	if r.opts.PodCIDR != "" {
		if cidr, err = netip.ParsePrefix(r.opts.PodCIDR); err != nil || !cidr.Addr().Is4() {
			return fmt.Errorf("E2E_POD_CIDR=%s: not an IPv4 range", r.opts.PodCIDR)
		}
		if rt, used := overlapping(routes, cidr); used {
			return fmt.Errorf("the Pod range %s is already routed here (%s; E2E_POD_CIDR to choose another)", cidr, rt)
		}
	} else {
		var ok bool
		if cidr, ok = freePodRange(routes); !ok {
			return fmt.Errorf("every /22 of %s is routed here: no free Pod range (E2E_POD_CIDR to choose one)", podRangePool)
		}
	}
	r.opts.PodCIDR = cidr.String()
	if err := ip("netns", "exec", r.netns, "ip", "route", "add", r.opts.PodCIDR, "via", r.env.webhookIP); err != nil {
		return err
	}
	if err := ip("route", "add", "local", r.opts.PodCIDR, "dev", "lo"); err != nil {
		return err
	}
	r.route = r.opts.PodCIDR
	r.env.podCIDR = r.opts.PodCIDR
	r.logf("Pod range %s: local to this machine", r.opts.PodCIDR)
	return r.recordProcesses()
}

// makeNetns makes the "test host": a network namespace joined to this one by
// a veth pair in a free 10.200.0.x/29. The host end carries the two replica
// addresses (.1, .2: ray-webhook listens there, and its lookup still reaches
// kube-apiserver on 127.0.0.1; an EndpointSlice may not name loopback) and
// the two CoreDNS addresses (.3, .4); the peer end (.6) is in the namespace,
// which reaches the Pod range through the host end (makePodRange). What runs
// that are gone left is removed first (removeLeftovers).
func (r *Running) makeNetns() error {
	r.removeLeftovers()
	used := map[string]bool{}
	for _, a := range ipv4Addrs("") {
		used[a.String()] = true
	}
	block := -1
	for i := 0; i < 32 && block < 0; i++ {
		free := true
		for _, host := range []int{1, 2, 3, 4, 6} {
			if used[fmt.Sprintf("10.200.0.%d", i*8+host)] {
				free = false
			}
		}
		if free {
			block = i
		}
	}
	if block < 0 {
		return fmt.Errorf("no free /29 in 10.200.0.0/24")
	}
	addr := func(host int) string { return fmt.Sprintf("10.200.0.%d", block*8+host) }
	pid := os.Getpid()
	ns, hostIf, peerIf := fmt.Sprintf("rwe2e-%d", pid), fmt.Sprintf("rwe2e%dh", pid), fmt.Sprintf("rwe2e%dp", pid)
	if err := ip("netns", "add", ns); err != nil {
		return fmt.Errorf("%v (root and CAP_NET_ADMIN are needed)", err)
	}
	r.netns = ns
	if err := r.recordProcesses(); err != nil {
		return err
	}
	e := &r.env
	e.netns, e.webhookIP, e.webhookIP2, e.dnsIP, e.dnsIP2, e.peerIP = ns, addr(1), addr(2), addr(3), addr(4), addr(6)
	steps := [][]string{
		{"link", "add", hostIf, "type", "veth", "peer", "name", peerIf},
		{"link", "set", peerIf, "netns", ns},
		{"addr", "add", e.webhookIP + "/29", "dev", hostIf},
		{"addr", "add", e.webhookIP2 + "/29", "dev", hostIf},
		{"addr", "add", e.dnsIP + "/29", "dev", hostIf},
		{"addr", "add", e.dnsIP2 + "/29", "dev", hostIf},
		{"link", "set", hostIf, "up"},
		{"netns", "exec", ns, "ip", "addr", "add", e.peerIP + "/29", "dev", peerIf},
		{"netns", "exec", ns, "ip", "link", "set", peerIf, "up"},
		{"netns", "exec", ns, "ip", "link", "set", "lo", "up"},
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			return err
		}
	}
	r.logf("network namespace %s: host end %s and %s (%s), peer %s", ns, e.webhookIP, e.webhookIP2, hostIf, e.peerIP)
	return nil
}

// removeNetwork undoes makeNetns (the veth pair goes with the namespace),
// makePodRange and startKubeProxy (its rules: releaseKubeProxy).
func (r *Running) removeNetwork() {
	r.releaseKubeProxy()
	if r.netns != "" {
		_ = ip("netns", "del", r.netns)
		os.RemoveAll("/etc/netns/" + r.netns)
		r.netns = ""
	}
	if r.route != "" {
		_ = ip("route", "del", "local", r.route, "dev", "lo")
		r.route = ""
	}
}
