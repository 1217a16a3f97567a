package framework

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The network of the Pods RayPods runs, as a point-to-point CNI plugin makes
// it: each Pod's namespace rwpod-PID-N holds its IP on eth0 with a device
// default route; the host end of its veth pair answers ARP for the rest
// (proxy_arp) and forwards. The host's route to the Pod's /32 goes in table
// local, where it outranks the Pod range's local route (longest prefix), so
// that Pod's address leaves this host's own and is the namespace's.
//
// Forwarding is turned on per interface (the Pods' host ends, and the test
// host's while Pods run), never machine-wide, and nftables table
// rwpods-PID drops whatever those interfaces would forward anywhere but to a
// Pod or the test host: a Pod reaches the suite's addresses and nothing
// beyond this machine.
const podNetnsPrefix = "rwpod-"

var podNet struct {
	sync.Mutex
	users  int
	table  string
	hostIf string
}

func sysctlWrite(path, value string) error {
	return os.WriteFile(filepath.Join("/proc/sys/net/ipv4", path), []byte(value), 0o644)
}

// enablePodForwarding makes the guard table and lets the test host reach the
// Pods; disablePodForwarding undoes it when the last user is done.
func enablePodForwarding(c *Cluster) error {
	podNet.Lock()
	defer podNet.Unlock()
	podNet.users++
	if podNet.users > 1 {
		return nil
	}
	podNet.table = fmt.Sprintf("rwpods-%d", os.Getpid())
	rules := fmt.Sprintf(`table inet %s {
	chain forward {
		type filter hook forward priority filter; policy accept;
		iifname { "rwp*", "%s" } oifname "rwp*" accept
		iifname "rwp*" oifname "%s" accept
		iifname { "rwp*", "%s" } drop
	}
}
`, podNet.table, testHostIf(c), testHostIf(c), testHostIf(c))
	cmd := exec.Command("nft", "-f", "-")
	cmd.Stdin = strings.NewReader(rules)
	if out, err := cmd.CombinedOutput(); err != nil {
		podNet.users--
		return fmt.Errorf("nft: %v: %s", err, out)
	}
	podNet.hostIf = testHostIf(c)
	if err := sysctlWrite(filepath.Join("conf", podNet.hostIf, "forwarding"), "1"); err != nil {
		return fmt.Errorf("forwarding on %s: %v", podNet.hostIf, err)
	}
	return nil
}

func disablePodForwarding() {
	podNet.Lock()
	defer podNet.Unlock()
	podNet.users--
	if podNet.users > 0 {
		return
	}
	_ = sysctlWrite(filepath.Join("conf", podNet.hostIf, "forwarding"), "0")
	_ = exec.Command("nft", "delete", "table", "inet", podNet.table).Run()
}

// testHostIf is the host end of the test host's veth pair (makeNetns).
func testHostIf(c *Cluster) string {
	return "rwe2e" + strings.TrimPrefix(c.NetNS, netnsPrefix) + "h"
}

// makePodNetwork makes namespace NETNS holding PODIP, joined to the host by
// HOSTIF, with the kubelet's resolv.conf and hosts for it (/etc/netns/NETNS/,
// which `ip netns exec` binds over /etc).
func makePodNetwork(netns, hostIf, podIP, resolv, hosts string) error {
	etc := filepath.Join("/etc/netns", netns)
	if err := os.MkdirAll(etc, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(etc, "resolv.conf"), []byte(resolv), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(etc, "hosts"), []byte(hosts), 0o644); err != nil {
		return err
	}
	peer := hostIf + "c"
	steps := [][]string{
		{"netns", "add", netns},
		{"link", "add", hostIf, "type", "veth", "peer", "name", peer},
		{"link", "set", peer, "netns", netns},
		{"link", "set", hostIf, "up"},
		{"netns", "exec", netns, "ip", "link", "set", peer, "name", "eth0"},
		{"netns", "exec", netns, "ip", "addr", "add", podIP + "/32", "dev", "eth0"},
		{"netns", "exec", netns, "ip", "link", "set", "eth0", "up"},
		{"netns", "exec", netns, "ip", "link", "set", "lo", "up"},
		{"netns", "exec", netns, "ip", "route", "add", "default", "dev", "eth0", "scope", "link"},
	}
	for i, s := range steps {
		if err := ip(s...); err != nil {
			return err
		}
		if i == 3 {
			for _, knob := range []string{"proxy_arp", "forwarding"} {
				if err := sysctlWrite(filepath.Join("conf", hostIf, knob), "1"); err != nil {
					return fmt.Errorf("%s on %s: %v", knob, hostIf, err)
				}
			}
		}
	}
	return ip("route", "add", podIP+"/32", "dev", hostIf, "table", "local")
}

// removePodNetwork undoes makePodNetwork (whatever of it was done).
func removePodNetwork(netns, hostIf, ip string) {
	_ = exec.Command("ip", "route", "del", ip+"/32", "dev", hostIf, "table", "local").Run()
	_ = exec.Command("ip", "link", "del", hostIf).Run()
	_ = exec.Command("ip", "netns", "del", netns).Run()
	os.RemoveAll(filepath.Join("/etc/netns", netns))
}

// netnsPids are the processes in namespace NETNS.
func netnsPids(netns string) []int {
	out, err := exec.Command("ip", "netns", "pids", netns).Output()
	if err != nil {
		return nil
	}
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

func signalNetns(netns string, sig syscall.Signal) {
	for _, pid := range netnsPids(netns) {
		_ = syscall.Kill(pid, sig)
	}
}

// removePodLeftovers removes what RayPods of a process that is gone left (a
// killed test binary runs no cleanup): the processes and namespaces of its
// Pods, and its guard table; and a partition CutLink left. It says what it
// removed.
func removePodLeftovers(logf func(string, ...any)) {
	dead := func(name, prefix string) bool {
		pidText, _, _ := strings.Cut(strings.TrimPrefix(name, prefix), "-")
		pid, err := strconv.Atoi(pidText)
		return err == nil && pid > 0 && syscall.Kill(pid, 0) == syscall.ESRCH
	}
	out, _ := exec.Command("ip", "netns", "list").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || !strings.HasPrefix(f[0], podNetnsPrefix) || !dead(f[0], podNetnsPrefix) {
			continue
		}
		for i := 0; i < 50 && len(netnsPids(f[0])) > 0; i++ {
			signalNetns(f[0], syscall.SIGKILL)
			time.Sleep(100 * time.Millisecond)
		}
		_ = exec.Command("ip", "netns", "del", f[0]).Run()
		os.RemoveAll(filepath.Join("/etc/netns", f[0]))
		logf("removed the Pod network namespace %s and its processes, left by a run that is gone", f[0])
	}
	tables, _ := exec.Command("nft", "list", "tables", "inet").Output()
	for _, line := range strings.Split(string(tables), "\n") {
		f := strings.Fields(line)
		for _, prefix := range []string{"rwpods-", "rwcut-"} { // RayPods' guard, CutLink's partition
			if len(f) == 3 && strings.HasPrefix(f[2], prefix) && dead(f[2], prefix) {
				_ = exec.Command("nft", "delete", "table", "inet", f[2]).Run()
				logf("removed nftables table inet %s, left by a run that is gone", f[2])
			}
		}
	}
}
