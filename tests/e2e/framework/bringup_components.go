package framework

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// startEtcd: one member on loopback, no fsync (the data is thrown away).
func (r *Running) startEtcd() error {
	client, err := loopbackPort()
	if err != nil {
		return err
	}
	peer, err := loopbackPort()
	if err != nil {
		return err
	}
	r.env.etcdURL = fmt.Sprintf("http://127.0.0.1:%d", client)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peer)
	d, err := r.spawn("etcd", nil, r.bin("etcd"), "--name", "e2e", "--data-dir", r.path("etcd"),
		"--listen-client-urls", r.env.etcdURL, "--advertise-client-urls", r.env.etcdURL,
		"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
		"--initial-cluster", "e2e="+peerURL, "--unsafe-no-fsync", "--log-level", "warn")
	if err != nil {
		return err
	}
	return d.waitReady(plainProbe(r.env.etcdURL+"/health"), 60*time.Second)
}

// adminTLS is the admin's client configuration for kube-apiserver.
func (r *Running) adminTLS() (*tls.Config, error) {
	pair, err := tls.LoadX509KeyPair(r.path("pki", "admin.crt"), r.path("pki", "admin.key"))
	if err != nil {
		return nil, err
	}
	ca, err := os.ReadFile(r.path("pki", "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	return &tls.Config{Certificates: []tls.Certificate{pair}, RootCAs: pool}, nil
}

// startAPIServer runs kube-apiserver with the default admission plugins
// (ServiceAccount among them: it adds the token volume every real Pod has,
// before the webhooks run) and aggregator routing: a webhook given as
// clientConfig.service is dialled at an EndpointSlice address of the Service
// instead of its ClusterIP (k8s.io/kubernetes cmd/kube-apiserver/app/server.go
// buildServiceResolver; k8s.io/apiserver pkg/util/proxy/proxy.go
// ResolveEndpoint). No endpoint reconciler: it refuses a loopback advertise
// address, and no client here needs the kubernetes Service's endpoints.
func (r *Running) startAPIServer() error {
	port, err := loopbackPort()
	if err != nil {
		return err
	}
	r.env.apiServer = fmt.Sprintf("https://127.0.0.1:%d", port)
	pki := func(name string) string { return r.path("pki", name) }
	d, err := r.spawn("kube-apiserver", nil, r.bin("kube-apiserver"),
		"--etcd-servers", r.env.etcdURL,
		"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", itoa(port),
		"--tls-cert-file", pki("apiserver.crt"), "--tls-private-key-file", pki("apiserver.key"),
		"--client-ca-file", pki("ca.crt"),
		"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file", pki("sa.pub"), "--service-account-signing-key-file", pki("sa.key"),
		"--service-cluster-ip-range", serviceRange,
		"--authorization-mode", "RBAC",
		"--endpoint-reconciler-type", "none",
		"--enable-aggregator-routing=true",
		"--cert-dir", r.path("apiserver-certs"),
		"--audit-policy-file", filepath.Join(r.opts.E2EDir, "manifests", "audit-policy.yaml"),
		"--audit-log-path", r.path("logs", "audit.log"),
		"--profiling="+strconv.FormatBool(r.opts.APIServerProfiling), "--v=1")
	if err != nil {
		return err
	}
	cfg, err := r.adminTLS()
	if err != nil {
		return err
	}
	if err := d.waitReady(tlsProbe(r.env.apiServer+"/readyz", cfg), 120*time.Second); err != nil {
		return err
	}
	if err := r.writeKubeconfig(port); err != nil {
		return err
	}
	var version struct{ ServerVersion struct{ GitVersion string } }
	out, _ := exec.Command(r.bin("kubectl"), "--kubeconfig", r.path("kubeconfig"), "version", "-o", "json").Output()
	_ = json.Unmarshal(out, &version)
	r.logf("kube-apiserver %s ready on 127.0.0.1:%d", version.ServerVersion.GitVersion, port)
	return nil
}

// startComponent runs kube-controller-manager or kube-scheduler with the
// admin kubeconfig (also for delegated authentication and authorization), no
// leader election, health on a free loopback port, and waits for /healthz.
func (r *Running) startComponent(name string, flags ...string) error {
	port, err := loopbackPort()
	if err != nil {
		return err
	}
	kubeconfig := r.path("kubeconfig")
	args := append([]string{"--kubeconfig", kubeconfig,
		"--authentication-kubeconfig", kubeconfig, "--authorization-kubeconfig", kubeconfig,
		"--bind-address", "127.0.0.1", "--secure-port", itoa(port), "--leader-elect=false",
		"--cert-dir", r.path(name + "-certs"), "--profiling=false", "--v=1"}, flags...)
	d, err := r.spawn(name, nil, r.bin(name), args...)
	if err != nil {
		return err
	}
	// Its serving certificate is self-signed into --cert-dir.
	return d.waitReady(tlsProbe(fmt.Sprintf("https://127.0.0.1:%d/healthz", port),
		&tls.Config{InsecureSkipVerify: true}), 60*time.Second)
}

// startControllerManager runs every default controller. It signs the tokens
// of ServiceAccount token Secrets with the API server's key and publishes its
// CA (ConfigMap kube-root-ca.crt in every namespace).
func (r *Running) startControllerManager() error {
	return r.startComponent("kube-controller-manager",
		"--service-account-private-key-file", r.path("pki", "sa.key"),
		"--root-ca-file", r.path("pki", "ca.crt"), "--use-service-account-credentials=false", "--cluster-name", "e2e")
}

func (r *Running) startScheduler() error { return r.startComponent("kube-scheduler") }

// moduleDir is the directory of module MOD as required by the Go module in
// DIR (downloaded into the module cache if needed).
func moduleDir(dir, mod string) (string, error) {
	run := func(args ...string) (string, error) {
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("go %s in %s: %v: %s", strings.Join(args, " "), dir, err, strings.TrimSpace(string(out)))
		}
		return strings.TrimSpace(string(out)), nil
	}
	if _, err := run("mod", "download", mod); err != nil {
		return "", err
	}
	return run("list", "-m", "-f", "{{.Dir}}", mod)
}

// startKwok runs KWOK for one Node, kwok-node-0, whose Pod range is POD_CIDR,
// with the stages KWOK's module ships: the node becomes Ready and keeps its
// lease; Pods bound to it become Running and Ready, complete, and go once
// deleted. The node is tainted (kwokTaint).
//
// The Pods whose container RayPods runs (RunLabel) get from KWOK what a
// node's runtime and CNI plugin give (Running, an IP) but not readiness,
// which RayPods reports from their readinessProbe; KWOK's fast stages neither
// complete them (RayPods writes the phase their container's exit gives) nor
// remove them at once when deleted (RayPods stops the container and removes
// the Pod, as a kubelet does; KWOK removes one still there when its grace
// period ends).
func (r *Running) startKwok() error {
	dir, err := moduleDir(filepath.Join(r.opts.E2EDir, "addons"), "sigs.k8s.io/kwok")
	if err != nil {
		return err
	}
	var config strings.Builder
	notRun := fmt.Sprintf("    - key: '.metadata.labels[\"%s\"]'\n      operator: 'DoesNotExist'\n", RunLabel)
	for _, stage := range []string{"node/fast/node-initialize.yaml", "node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
		"pod/fast/pod-ready.yaml", "pod/fast/pod-complete.yaml", "pod/fast/pod-delete.yaml"} {
		b, err := os.ReadFile(filepath.Join(dir, "kustomize", "stage", stage))
		if err != nil {
			return fmt.Errorf("KWOK stage: %v", err)
		}
		text := string(b)
		if strings.HasPrefix(stage, "pod/") {
			stock, err := withSelector(text, notRun)
			if err != nil {
				return fmt.Errorf("KWOK stage %s: %v", stage, err)
			}
			config.WriteString(stock + "\n---\n")
		} else {
			config.WriteString(text + "\n---\n")
		}
		if stage == "pod/fast/pod-ready.yaml" {
			running, err := runningNotReady(text)
			if err != nil {
				return fmt.Errorf("KWOK stage %s: %v", stage, err)
			}
			config.WriteString(running + "\n---\n")
		}
	}
	config.WriteString(fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-delete-after-grace
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.labels["%s"]'
      operator: 'Exists'
    - key: '.metadata.deletionTimestamp'
      operator: 'Exists'
  delay:
    durationMilliseconds: 0
    durationFrom:
      expressionFrom: '.metadata.deletionTimestamp'
  next:
    delete: true
`, RunLabel))
	if err := os.WriteFile(r.path("kwok.yaml"), []byte(config.String()), 0o644); err != nil {
		return err
	}
	port, err := loopbackPort()
	if err != nil {
		return err
	}
	d, err := r.spawn("kwok", nil, r.bin("kwok"), "--kubeconfig", r.path("kubeconfig"), "--config", r.path("kwok.yaml"),
		"--manage-all-nodes=false", "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--cidr", r.opts.PodCIDR, "--node-ip", r.env.dnsIP, "--server-address", fmt.Sprintf("127.0.0.1:%d", port),
		"--node-lease-duration-seconds", "40")
	if err != nil {
		return err
	}
	node := fmt.Sprintf(`apiVersion: v1
kind: Node
metadata:
  name: %s
  annotations: {kwok.x-k8s.io/node: fake, node.alpha.kubernetes.io/ttl: "0"}
  labels: {kubernetes.io/hostname: %s, kubernetes.io/os: linux, kubernetes.io/arch: amd64, type: kwok}
spec:
  podCIDR: %s
  podCIDRs: [%s]
  taints: [{key: %s, value: "true", effect: NoSchedule}]
`, KwokNode, KwokNode, r.opts.PodCIDR, r.opts.PodCIDR, kwokTaint)
	if _, err := r.kubectl(node, "apply", "-f", "-"); err != nil {
		return err
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if d.exited() {
			return fmt.Errorf("kwok exited (%v); the end of %s:\n%s", d.err, d.log, d.tail())
		}
		out, _ := r.kubectl("", "get", "node", KwokNode, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
		if strings.TrimSpace(out) == "True" {
			return nil
		}
	}
	return fmt.Errorf("node %s did not become Ready; the end of %s:\n%s", KwokNode, d.log, d.tail())
}

// withSelector adds matchExpressions lines to a KWOK stage's selector.
func withSelector(stage, lines string) (string, error) {
	const at = "    matchExpressions:\n"
	if !strings.Contains(stage, at) {
		return "", fmt.Errorf("no %q to add to", strings.TrimSpace(at))
	}
	return strings.Replace(stage, at, at+lines, 1), nil
}

// runningNotReady is KWOK's pod-ready stage for the Pods RayPods runs: the
// same status (phase Running, the Pod's IP) with every container and the
// Ready and ContainersReady conditions not ready.
func runningNotReady(podReady string) (string, error) {
	text := strings.Replace(podReady, "name: pod-ready\n", "name: pod-running-not-ready\n", 1)
	for _, cond := range []string{"Ready", "ContainersReady"} {
		text = strings.Replace(text, "status: \"True\"\n        type: "+cond+"\n", "status: \"False\"\n        type: "+cond+"\n", 1)
	}
	text = strings.Replace(text, "ready: true\n        restartCount: 0\n        state:\n          running:", "ready: false\n        restartCount: 0\n        state:\n          running:", 1)
	if strings.Count(text, `status: "False"`) != 2 || !strings.Contains(text, "ready: false") || !strings.Contains(text, "pod-running-not-ready") {
		return "", fmt.Errorf("its status template is not the one RayPods' variant is made from")
	}
	return withSelector(text, fmt.Sprintf("    - key: '.metadata.labels[\"%s\"]'\n      operator: 'Exists'\n", RunLabel))
}

// startCoreDNS serves the zone cluster.local on DNS_IP:53: Service and Pod
// records from the API server; other names are refused, never forwarded. It
// also writes the resolv.conf the operators resolve with (CoreDNS alone).
func (r *Running) startCoreDNS() error {
	ready, err := loopbackPort()
	if err != nil {
		return err
	}
	corefile := fmt.Sprintf(`cluster.local:53 {
    bind %s
    errors
    ready 127.0.0.1:%d
    kubernetes cluster.local {
        kubeconfig %s e2e
    }
}
`, r.env.dnsIP, ready, r.path("kubeconfig"))
	if err := os.WriteFile(r.path("Corefile"), []byte(corefile), 0o644); err != nil {
		return err
	}
	d, err := r.spawn("coredns", nil, r.bin("coredns"), "-conf", r.path("Corefile"))
	if err != nil {
		return err
	}
	if err := d.waitReady(plainProbe(fmt.Sprintf("http://127.0.0.1:%d/ready", ready)), 60*time.Second); err != nil {
		return err
	}
	if err := os.MkdirAll(r.path("cluster-dns"), 0o755); err != nil {
		return err
	}
	r.env.resolvConf = r.path("cluster-dns", "resolv.conf")
	return os.WriteFile(r.env.resolvConf, []byte("nameserver "+r.env.dnsIP+"\noptions timeout:1 attempts:2\n"), 0o644)
}

// startRayStandin runs what stands in for Ray where none runs
// (cmd/ray-standin): the dashboard's /api/version of each head, on the head
// Pod's own address.
func (r *Running) startRayStandin() error {
	_, err := r.spawn("ray-standin", nil, r.bin("ray-standin"), "-server", r.env.apiServer,
		"-ca", r.path("pki", "ca.crt"), "-cert", r.path("pki", "admin.crt"), "-key", r.path("pki", "admin.key"),
		"-pod-cidr", r.opts.PodCIDR)
	if err != nil {
		return err
	}
	r.logf("kube-controller-manager, kube-scheduler, KWOK (node %s, Pods in %s), CoreDNS (%s) and the Ray stand-in running",
		KwokNode, r.opts.PodCIDR, r.env.dnsIP)
	return nil
}
