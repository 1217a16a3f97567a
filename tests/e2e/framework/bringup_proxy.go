package framework

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// kube-proxy of k8s.io/kubernetes (.bin/kube-proxy) runs for the KWOK node,
// so that a ClusterIP Service routes here as on a node of a real cluster: a
// connection to a ClusterIP, from this host or from the test host's
// namespace (routed to the Service range through the host end), is DNATed to
// one of the Service's endpoints, Pod addresses local to this machine
// (makePodRange).
//
// One kube-proxy per machine. Its rules are the machine's, under names fixed
// in kube-proxy (nftables mode: the tables "ip kube-proxy" and "ip6
// kube-proxy"; iptables mode: KUBE- chains in the nat and filter tables), and
// it programs every Service of its API server, whose ClusterIPs come from the
// serviceRange every cluster here shares. So the cluster that holds
// kubeProxyOwner runs it; one brought up while another live cluster holds it
// runs none: cluster.env says KUBE_PROXY=none: WHY, its test host gets no
// route to the Service range, and the checks that dial a ClusterIP fail with
// that reason (from this host its ClusterIPs reach the owner's Services, when
// the owner has one at that address). The owner removes the rules when it
// stops (removeNetwork); rules whose owner's kube-proxy is gone (a killed
// run) the next bring-up removes (removeKubeProxyLeftover). Rules that no
// owner file names are not this suite's: they are left alone and no
// kube-proxy is started.

// kubeProxyOwner names the process that runs this machine's kube-proxy for
// the suite (proxyOwner); /run, like the rules, does not outlive a reboot.
const kubeProxyOwner = "/run/ray-webhook-e2e-kube-proxy"

// proxyOwner is kubeProxyOwner's content: the process that runs kube-proxy
// (while its bring-up has not started it yet, the bring-up's own), the mode,
// the binary (its --cleanup removes iptables mode's rules) and the cluster's WORK.
type proxyOwner struct {
	pid   int
	start string // startTime(pid) when written
	mode  string // nftables or iptables
	bin   string
	work  string
}

func (o proxyOwner) String() string {
	return fmt.Sprintf("pid=%d\nstart=%s\nmode=%s\nbin=%s\nwork=%s\n", o.pid, o.start, o.mode, o.bin, o.work)
}

// parseProxyOwner reads what String wrote; ok is false for anything else.
func parseProxyOwner(s string) (o proxyOwner, ok bool) {
	for _, line := range strings.Split(s, "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch k {
		case "pid":
			o.pid, _ = strconv.Atoi(v)
		case "start":
			o.start = v
		case "mode":
			o.mode = v
		case "bin":
			o.bin = v
		case "work":
			o.work = v
		}
	}
	return o, o.pid > 1 && o.start != "" && o.start != "-" && (o.mode == "nftables" || o.mode == "iptables") && o.work != ""
}

// alive says whether the process o names still runs (the same one: a pid may
// have been reused since).
func (o proxyOwner) alive() bool { return startTime(o.pid) == o.start }

// readProxyOwner reads kubeProxyOwner; exists is false when there is none.
func readProxyOwner() (o proxyOwner, ok, exists bool) {
	b, err := os.ReadFile(kubeProxyOwner)
	if err != nil {
		return o, false, !errors.Is(err, fs.ErrNotExist)
	}
	o, ok = parseProxyOwner(string(b))
	return o, ok, true
}

// writeProxyOwner replaces kubeProxyOwner's content at once.
func writeProxyOwner(o proxyOwner) error {
	tmp := kubeProxyOwner + ".tmp" + itoa(os.Getpid())
	if err := os.WriteFile(tmp, []byte(o.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, kubeProxyOwner)
}

// proxyMode is nftables when kube-proxy's nftables mode works here (the nft
// command lists the tables and the kernel is 5.13 or later, what that mode
// requires), else iptables.
func proxyMode() (string, error) {
	if _, err := exec.LookPath("nft"); err == nil && exec.Command("nft", "list", "tables").Run() == nil {
		if release, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil && kernelAtLeast(string(release), 5, 13) {
			return "nftables", nil
		}
	}
	if _, err := exec.LookPath("iptables"); err == nil {
		return "iptables", nil
	}
	return "", errors.New("kube-proxy needs nft (nftables mode) or iptables; neither is installed (scripts/install-deps.sh --test)")
}

// kernelAtLeast says whether a kernel release ("6.1.0-18-amd64") is at least major.minor.
func kernelAtLeast(release string, major, minor int) bool {
	f := strings.FieldsFunc(strings.TrimSpace(release), func(r rune) bool { return r < '0' || r > '9' })
	if len(f) < 2 {
		return false
	}
	ma, _ := strconv.Atoi(f[0])
	mi, _ := strconv.Atoi(f[1])
	return ma > major || ma == major && mi >= minor
}

// proxyTools are the commands kube-proxy may run in each mode. It finds
// nothing else on its PATH: kube-proxy's start-up clean-up of the other modes
// would otherwise delete iptables KUBE- chains (in nftables mode) or the
// nftables tables (in iptables mode), and flush every IPVS virtual server of
// the machine after loading ip_vs with modprobe.
var proxyTools = map[string][]string{
	"nftables": {"nft"},
	"iptables": {"iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore"},
}

// linkProxyTools fills dir with links to MODE's commands (those installed).
func linkProxyTools(dir, mode string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range proxyTools[mode] {
		p, err := exec.LookPath(name)
		if err != nil {
			continue
		}
		if p, err = filepath.Abs(p); err != nil {
			return err
		}
		os.Remove(filepath.Join(dir, name))
		if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// proxyRulesPresent says whether MODE's kube-proxy rules exist on this
// machine (in iptables mode also KUBE-FIREWALL, which a kubelet would own).
func proxyRulesPresent(mode string) bool {
	if mode == "nftables" {
		return exec.Command("nft", "list", "table", "ip", "kube-proxy").Run() == nil ||
			exec.Command("nft", "list", "table", "ip6", "kube-proxy").Run() == nil
	}
	return exec.Command("iptables", "-t", "nat", "-n", "-L", "KUBE-SERVICES").Run() == nil ||
		exec.Command("iptables", "-t", "filter", "-n", "-L", "KUBE-FIREWALL").Run() == nil
}

// removeProxyRules removes the rules of o's kube-proxy (stopped): nftables
// mode's two tables, or in iptables mode what `kube-proxy --cleanup` removes
// and the KUBE-FIREWALL chains it leaves (the kubelet's, which iptables mode
// duplicates; no kubelet runs here: startKubeProxy found none). The empty
// standard tables iptables made stay.
func removeProxyRules(o proxyOwner) error {
	if o.mode == "nftables" {
		for _, family := range []string{"ip", "ip6"} {
			if exec.Command("nft", "list", "table", family, "kube-proxy").Run() != nil {
				continue
			}
			if out, err := exec.Command("nft", "delete", "table", family, "kube-proxy").CombinedOutput(); err != nil {
				return fmt.Errorf("nft delete table %s kube-proxy: %v: %s", family, err, strings.TrimSpace(string(out)))
			}
		}
		return nil
	}
	tools, err := os.MkdirTemp("", "ray-webhook-e2e-kube-proxy.")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tools)
	if err := linkProxyTools(tools, o.mode); err != nil {
		return err
	}
	cmd := exec.Command(o.bin, "--cleanup", "--proxy-mode", o.mode)
	cmd.Env = append(os.Environ(), "PATH="+tools)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s --cleanup --proxy-mode %s: %v: %s", o.bin, o.mode, err, lastLines(string(out), 10))
	}
	for _, ipt := range []string{"iptables", "ip6tables"} {
		if _, err := exec.LookPath(ipt); err != nil || exec.Command(ipt, "-t", "filter", "-n", "-L", "KUBE-FIREWALL").Run() != nil {
			continue
		}
		for _, from := range []string{"INPUT", "OUTPUT"} {
			for i := 0; i < 10 && exec.Command(ipt, "-t", "filter", "-D", from, "-j", "KUBE-FIREWALL").Run() == nil; i++ {
			}
		}
		for _, op := range []string{"-F", "-X"} {
			if out, err := exec.Command(ipt, "-t", "filter", op, "KUBE-FIREWALL").CombinedOutput(); err != nil {
				return fmt.Errorf("%s -t filter %s KUBE-FIREWALL: %v: %s", ipt, op, err, strings.TrimSpace(string(out)))
			}
		}
	}
	return nil
}

// releaseKubeProxy removes the machine's kube-proxy rules and kubeProxyOwner
// when the file names the cluster in WORK, whose processes are stopped. When
// the rules cannot be removed the file stays, so the next bring-up tries again.
func (r *Running) releaseKubeProxy() {
	o, ok, _ := readProxyOwner()
	if !ok || !sameDir(o.work, r.Work) {
		return
	}
	if err := removeProxyRules(o); err != nil {
		r.logf("kube-proxy's rules stay: %v", err)
		return
	}
	os.Remove(kubeProxyOwner)
}

func sameDir(a, b string) bool {
	a, errA := filepath.Abs(a)
	b, errB := filepath.Abs(b)
	return errA == nil && errB == nil && a == b
}

// startKubeProxy runs kube-proxy for the node kwok-node-0 (Ready by now:
// kube-proxy reads its addresses) with the admin kubeconfig, in nftables mode
// where that works (proxyMode), POD_CIDR as the cluster's Pod range (traffic
// from elsewhere to a ClusterIP is masqueraded when it leaves the host),
// NodePorts only on the node's address (the host end .3, reached from this
// machine and the test host alone: nftables mode serves none on loopback, and
// iptables mode's would set route_localnet), health and metrics on free
// loopback ports, and no machine-wide setting changed that need not be:
// conntrack's table size and timeouts as they are, no OOM protection. It
// waits for /healthz (200 once the rules are written) and routes the test
// host's Service range through the host end.
func (r *Running) startKubeProxy() error {
	mode, err := proxyMode()
	if err != nil {
		return err
	}
	work, err := filepath.Abs(r.Work)
	if err != nil {
		return err
	}
	me := proxyOwner{pid: os.Getpid(), start: startTime(os.Getpid()), mode: mode, bin: r.bin("kube-proxy"), work: work}
	f, err := os.OpenFile(kubeProxyOwner, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		other, ok, _ := readProxyOwner()
		why := fmt.Sprintf("%s is unreadable", kubeProxyOwner)
		switch {
		case ok && other.alive():
			why = fmt.Sprintf("the cluster in %s runs this machine's kube-proxy (%s mode, pid %d)", other.work, other.mode, other.pid)
		case ok:
			why = fmt.Sprintf("the kube-proxy rules of a run that is gone (%s) stay", other.work)
		}
		return r.noKubeProxy(why)
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(me.String())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(kubeProxyOwner)
		return err
	}
	if proxyRulesPresent(mode) {
		os.Remove(kubeProxyOwner)
		return r.noKubeProxy(fmt.Sprintf("this machine has %s kube-proxy rules that are not this suite's", mode))
	}
	// From here on Stop removes the rules (releaseKubeProxy).
	tools := r.path("kube-proxy-path")
	if err := linkProxyTools(tools, mode); err != nil {
		return err
	}
	healthz, err := loopbackPort()
	if err != nil {
		return err
	}
	metrics, err := loopbackPort()
	if err != nil {
		return err
	}
	args := []string{"--kubeconfig", r.path("kubeconfig"), "--hostname-override", KwokNode,
		"--proxy-mode", mode, "--cluster-cidr", r.opts.PodCIDR,
		"--nodeport-addresses", r.env.dnsIP + "/32",
		"--healthz-bind-address", fmt.Sprintf("127.0.0.1:%d", healthz),
		"--metrics-bind-address", fmt.Sprintf("127.0.0.1:%d", metrics),
		"--conntrack-max-per-core=0", "--conntrack-tcp-timeout-established=0", "--conntrack-tcp-timeout-close-wait=0",
		"--oom-score-adj=0", "--v=1"}
	if mode == "iptables" {
		args = append(args, "--iptables-localhost-nodeports=false")
	}
	d, err := r.spawn("kube-proxy", []string{"PATH=" + tools}, r.bin("kube-proxy"), args...)
	if err != nil {
		return err
	}
	me.pid = d.cmd.Process.Pid
	me.start = startTime(me.pid)
	if err := writeProxyOwner(me); err != nil {
		return err
	}
	if err := d.waitReady(plainProbe(fmt.Sprintf("http://127.0.0.1:%d/healthz", healthz)), 60*time.Second); err != nil {
		return err
	}
	if err := ip("netns", "exec", r.netns, "ip", "route", "add", serviceRange, "via", r.env.webhookIP); err != nil {
		return err
	}
	r.env.kubeProxy = mode
	r.logf("kube-proxy ready (%s mode, node %s, Pods %s, health on 127.0.0.1:%d): ClusterIPs of %s route to their endpoints",
		mode, KwokNode, r.opts.PodCIDR, healthz, serviceRange)
	return nil
}

// noKubeProxy records that this cluster runs no kube-proxy, and why.
func (r *Running) noKubeProxy(why string) error {
	r.env.kubeProxy = "none: " + why
	r.logf("kube-proxy not started: %s; ClusterIPs of this cluster do not route from its test host", why)
	return nil
}
