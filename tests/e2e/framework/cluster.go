package framework

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// EnvVar names the file of KEY=VALUE lines that describes the cluster.
const EnvVar = "E2E_CLUSTER_ENV"

// Cluster is what BringUp wrote to cluster.env, and clients for it.
type Cluster struct {
	File string            // the cluster.env read
	Env  map[string]string // every KEY=VALUE of it

	Kubeconfig     string   // KUBECONFIG: the admin kubeconfig
	Kubectl        string   // KUBECTL
	Bin            string   // BIN: tests/e2e/.bin (operators, coredns, ...)
	E2EDir         string   // E2E_DIR: tests/e2e
	Work           string   // WORK: the run's work directory
	Logs           string   // LOGS: where every process logs
	PKI            string   // PKI: ca.crt admin.crt admin.key
	APIServer      string   // APISERVER: https://127.0.0.1:PORT
	NetNS          string   // NETNS: the "test host" network namespace
	PeerIP         string   // PEER_IP: its address
	DNSIP          string   // DNS_IP: the cluster's CoreDNS (zone CLUSTER_DOMAIN)
	DNSIP2         string   // DNS_IP2: free for a second CoreDNS on :53
	PodCIDR        string   // POD_CIDR: KWOK's Pod addresses, local to this machine
	KubeProxy      string   // KUBE_PROXY: kube-proxy's mode (nftables, iptables), or "none: WHY" (another cluster's runs)
	KwokTaint      string   // KWOK_TAINT: the key of kwok-node-0's NoSchedule taint
	ClusterDomain  string   // CLUSTER_DOMAIN: cluster.local
	ResolvConf     string   // RESOLV_CONF: a resolv.conf naming DNS_IP alone (for operators)
	RayWebhook     string   // RAY_WEBHOOK: the server binary
	WebhookIP      string   // WEBHOOK_IP: the shipped replica's address
	WebhookIP2     string   // WEBHOOK_IP2: free for an extra replica
	WebhookPort    int      // WEBHOOK_PORT: the shipped replica's port
	WebhookCertDir string   // WEBHOOK_CERT_DIR: tls.crt tls.key ca.crt
	WebhookArgs    []string // WEBHOOK_ARGS: the Deployment's serve args (no --port/--bind/--cert-dir/--probe-port)
	SADir          string   // SA_DIR: ray-webhook's ServiceAccount volume (token, ca.crt)
	WebhookLog     string   // WEBHOOK_LOG: the shipped replica's log
	WebhookToken   string   // WEBHOOK_TOKEN: a file with a token of deploy/'s ServiceAccount ray-webhook (2 h)
	WebhookCerts   string   // WEBHOOK_CERTS: the pair and CA that deploy/overlays/static-certs/generate.sh made
	DeploySrc      string   // DEPLOY_SRC: the copy of deploy/ and certs/ that was rendered (generated/ filled in)
	Rendered       string   // RENDERED: the static-certs overlay as one JSON List
	AuditLog       string   // AUDIT_LOG: kube-apiserver's audit log (manifests/audit-policy.yaml)
	Repo           string   // REPO: the source tree

	// Probes is what the Deployment asks the kubelet to probe (WEBHOOK_PROBES, JSON).
	Probes ProbeSpec
	// Image is ray-webhook's image when the replicas run from it (IMAGE_*:
	// BringUpOptions.Image), else nil: they run RAY_WEBHOOK.
	Image *Image
	// Registry is the suite's image registry, what was pushed to it and the
	// run's cosign key pair (REGISTRY, IMAGE_REF, COSIGN_*), when the
	// replicas run from the image.
	Registry *Registry
	// VolumeMode and VolumeGroup: how the volumes' files are left for the
	// server (VOLUME_MODE, octal, and VOLUME_GROUP: the Deployment's Secret
	// defaultMode and fsGroup when it runs from the image; 0600 and -1 else).
	VolumeMode  os.FileMode
	VolumeGroup int

	RESTConfig *rest.Config
	Kube       kubernetes.Interface
	Dynamic    dynamic.Interface

	agentOnce sync.Once
	agent     string
}

// probeAgent is the User-Agent of this cluster's kubelet probes.
func (c *Cluster) probeAgent() string {
	c.agentOnce.Do(func() {
		v, err := c.Kube.Discovery().ServerVersion()
		if err != nil {
			c.agent = kubeProbeAgent("")
			return
		}
		c.agent = kubeProbeAgent(v.GitVersion)
	})
	return c.agent
}

var (
	attachOnce sync.Once
	attached   *Cluster
	attachErr  error
)

// Attach returns the cluster named by E2E_CLUSTER_ENV, read once per process.
// It fails t when the variable is unset or the file is unusable.
func Attach(t testing.TB) *Cluster {
	t.Helper()
	c, err := load()
	if err != nil {
		t.Fatalf("framework: %v", err)
	}
	return c
}

func load() (*Cluster, error) {
	attachOnce.Do(func() { attached, attachErr = readCluster() })
	return attached, attachErr
}

func readCluster() (*Cluster, error) {
	file := os.Getenv(EnvVar)
	if file == "" {
		return nil, fmt.Errorf("%s is not set and no cluster was brought up (run the tests through framework.Main)", EnvVar)
	}
	return readClusterFile(file)
}

// readClusterFile reads a cluster.env and makes the clients.
func readClusterFile(file string) (*Cluster, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %v", EnvVar, file, err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return nil, fmt.Errorf("%s line %d is not KEY=VALUE: %q", file, n, line)
		}
		env[strings.TrimSpace(k)] = v
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %v", file, err)
	}
	c := &Cluster{File: file, Env: env}
	var missing []string
	str := func(key string, dst *string) {
		v, ok := env[key]
		if !ok || v == "" {
			missing = append(missing, key)
		}
		*dst = v
	}
	str("KUBECONFIG", &c.Kubeconfig)
	str("KUBECTL", &c.Kubectl)
	str("BIN", &c.Bin)
	str("E2E_DIR", &c.E2EDir)
	str("WORK", &c.Work)
	str("LOGS", &c.Logs)
	str("PKI", &c.PKI)
	str("APISERVER", &c.APIServer)
	str("NETNS", &c.NetNS)
	str("PEER_IP", &c.PeerIP)
	str("DNS_IP", &c.DNSIP)
	str("DNS_IP2", &c.DNSIP2)
	str("POD_CIDR", &c.PodCIDR)
	str("KWOK_TAINT", &c.KwokTaint)
	str("CLUSTER_DOMAIN", &c.ClusterDomain)
	str("RESOLV_CONF", &c.ResolvConf)
	str("RAY_WEBHOOK", &c.RayWebhook)
	str("WEBHOOK_IP", &c.WebhookIP)
	str("WEBHOOK_IP2", &c.WebhookIP2)
	var port string
	str("WEBHOOK_PORT", &port)
	str("WEBHOOK_CERT_DIR", &c.WebhookCertDir)
	str("SA_DIR", &c.SADir)
	str("WEBHOOK_LOG", &c.WebhookLog)
	str("WEBHOOK_TOKEN", &c.WebhookToken)
	str("WEBHOOK_CERTS", &c.WebhookCerts)
	str("DEPLOY_SRC", &c.DeploySrc)
	str("RENDERED", &c.Rendered)
	str("AUDIT_LOG", &c.AuditLog)
	str("REPO", &c.Repo)
	c.KubeProxy = env["KUBE_PROXY"]
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s (%s=%s) lacks %s", file, EnvVar, file, strings.Join(missing, ", "))
	}
	if _, ok := env["WEBHOOK_ARGS"]; !ok {
		return nil, fmt.Errorf("%s lacks WEBHOOK_ARGS", file)
	}
	c.WebhookArgs = strings.Fields(env["WEBHOOK_ARGS"])
	c.VolumeMode, c.VolumeGroup = 0o600, -1
	if v := env["VOLUME_MODE"]; v != "" {
		m, err := strconv.ParseUint(v, 8, 32)
		if err != nil {
			return nil, fmt.Errorf("%s: VOLUME_MODE=%q", file, v)
		}
		c.VolumeMode = os.FileMode(m)
	}
	if v := env["VOLUME_GROUP"]; v != "" {
		if c.VolumeGroup, err = strconv.Atoi(v); err != nil {
			return nil, fmt.Errorf("%s: VOLUME_GROUP=%q", file, v)
		}
	}
	if err := json.Unmarshal([]byte(env["WEBHOOK_PROBES"]), &c.Probes); err != nil || c.Probes.Readiness == nil || c.Probes.Liveness == nil {
		return nil, fmt.Errorf("%s: WEBHOOK_PROBES names no readiness and liveness probes (%v)", file, err)
	}
	if env["IMAGE_ROOTFS"] != "" {
		c.Image = &Image{Archive: env["IMAGE_ARCHIVE"], Rootfs: env["IMAGE_ROOTFS"], User: env["IMAGE_USER"]}
		if err := json.Unmarshal([]byte(env["IMAGE_ENTRYPOINT"]), &c.Image.Entrypoint); err != nil {
			return nil, fmt.Errorf("%s: IMAGE_ENTRYPOINT: %v", file, err)
		}
		if err := json.Unmarshal([]byte(env["IMAGE_ENV"]), &c.Image.Env); err != nil {
			return nil, fmt.Errorf("%s: IMAGE_ENV: %v", file, err)
		}
	}
	if env["REGISTRY"] != "" {
		c.Registry = &Registry{Host: env["REGISTRY"], CAFile: env["REGISTRY_CA"], CertsDir: env["REGISTRY_CERTS"],
			CosignKey: env["COSIGN_KEY"], CosignPub: env["COSIGN_PUB"], ImageRef: env["IMAGE_REF"]}
	}
	if c.WebhookPort, err = strconv.Atoi(port); err != nil {
		return nil, fmt.Errorf("%s: WEBHOOK_PORT=%q is not a port", file, port)
	}
	if !filepath.IsAbs(c.Bin) {
		c.Bin = filepath.Join(filepath.Dir(file), c.Bin)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("KUBECONFIG=%s: %v", c.Kubeconfig, err)
	}
	// 300 workers are listed and patched in loops: client-go's default 5 QPS
	// would make the suite measure its own throttling.
	cfg.QPS, cfg.Burst = 200, 400
	cfg.UserAgent = "ray-webhook-e2e-go"
	c.RESTConfig = cfg
	if c.Kube, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("client: %v", err)
	}
	if c.Dynamic, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("dynamic client: %v", err)
	}
	// go (for `go list -m` of the operators' modules): /usr/local/go first, as scripts/e2e.sh.
	if st, err := os.Stat("/usr/local/go/bin/go"); err == nil && !st.IsDir() &&
		!strings.HasPrefix(os.Getenv("PATH"), "/usr/local/go/bin:") {
		os.Setenv("PATH", "/usr/local/go/bin:"+os.Getenv("PATH"))
	}
	if os.Getenv("GOTOOLCHAIN") == "" {
		os.Setenv("GOTOOLCHAIN", "local")
	}
	return c, nil
}

func (c *Cluster) volumeOwner() volumeOwner {
	return volumeOwner{mode: c.VolumeMode, gid: c.VolumeGroup}
}
