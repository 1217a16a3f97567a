package framework

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// clusterEnv is what BringUp learns on the way, for cluster.env.
type clusterEnv struct {
	rayWebhook, podCIDR                                 string
	netns, webhookIP, webhookIP2, dnsIP, dnsIP2, peerIP string
	etcdURL, apiServer, resolvConf                      string
	deploySrc, webhookCerts, rendered, secretDir, saDir string
	webhookToken, clusterDomain                         string
	kubeProxy                                           string // its mode, or "none: WHY"
	webhookArgs                                         []string
	webhookPort, webhookPid, volumeGroup                int
	volumeMode                                          os.FileMode
	probes                                              ProbeSpec
}

// writeClusterEnv writes WORK/cluster.env, what Attach reads (KEY=VALUE
// lines; the keys are Cluster's), and WORK/bench.env, what bench/apiserver.sh
// reads of the same cluster.
func (r *Running) writeClusterEnv() error {
	e := r.env
	lines := [][2]string{
		{"KUBECONFIG", r.path("kubeconfig")},
		{"KUBECTL", r.bin("kubectl")},
		{"BIN", r.opts.Bin},
		{"E2E_DIR", r.opts.E2EDir},
		{"WORK", r.Work},
		{"LOGS", r.path("logs")},
		{"PKI", r.path("pki")},
		{"APISERVER", e.apiServer},
		{"NETNS", e.netns},
		{"PEER_IP", e.peerIP},
		{"DNS_IP", e.dnsIP},
		{"DNS_IP2", e.dnsIP2},
		{"POD_CIDR", e.podCIDR},
		{"KUBE_PROXY", e.kubeProxy},
		{"KWOK_TAINT", kwokTaint},
		{"CLUSTER_DOMAIN", e.clusterDomain},
		{"RESOLV_CONF", e.resolvConf},
		{"RAY_WEBHOOK", e.rayWebhook},
		{"WEBHOOK_IP", e.webhookIP},
		{"WEBHOOK_IP2", e.webhookIP2},
		{"WEBHOOK_PORT", itoa(e.webhookPort)},
		{"WEBHOOK_CERT_DIR", e.secretDir},
		{"WEBHOOK_ARGS", strings.Join(e.webhookArgs, " ")},
		{"SA_DIR", e.saDir},
		{"WEBHOOK_LOG", r.path("logs", "ray-webhook.log")},
		{"WEBHOOK_TOKEN", e.webhookToken},
		{"WEBHOOK_CERTS", e.webhookCerts},
		{"DEPLOY_SRC", e.deploySrc},
		{"RENDERED", e.rendered},
		{"AUDIT_LOG", r.path("logs", "audit.log")},
		{"REPO", r.opts.Repo},
		{"RAY_VENV", r.opts.RayVenv},
		{"VOLUME_MODE", fmt.Sprintf("%o", e.volumeMode)},
		{"VOLUME_GROUP", itoa(e.volumeGroup)},
	}
	probes, _ := json.Marshal(e.probes)
	lines = append(lines, [2]string{"WEBHOOK_PROBES", string(probes)})
	if im := r.image; im != nil {
		entrypoint, _ := json.Marshal(im.Entrypoint)
		env, _ := json.Marshal(im.Env)
		lines = append(lines, [][2]string{{"IMAGE_ARCHIVE", im.Archive}, {"IMAGE_ROOTFS", im.Rootfs}, {"IMAGE_ENTRYPOINT", string(entrypoint)}, {"IMAGE_USER", im.User},
			{"IMAGE_ENV", string(env)}}...)
	}
	if reg := r.registry; reg != nil {
		lines = append(lines, [][2]string{{"REGISTRY", reg.Host}, {"REGISTRY_CA", reg.CAFile}, {"REGISTRY_CERTS", reg.CertsDir},
			{"COSIGN_KEY", reg.CosignKey}, {"COSIGN_PUB", reg.CosignPub}, {"IMAGE_REF", reg.ImageRef}}...)
	}
	var b strings.Builder
	for _, kv := range lines {
		fmt.Fprintf(&b, "%s=%s\n", kv[0], kv[1])
	}
	if err := os.WriteFile(r.ClusterEnv, []byte(b.String()), 0o644); err != nil {
		return err
	}
	bench := fmt.Sprintf(`KUBECONFIG=%s
KUBECTL=%s
PODLOAD=%s
APISERVER=%s
PKI=%s
WEBHOOK_IP=%s
WEBHOOK_PORT=%d
WEBHOOK_CERT_DIR=%s
RAY_WEBHOOK_PID=%d
LOGS=%s
BIN=%s
E2E_DIR=%s
KWOK_TAINT=%s
`, r.path("kubeconfig"), r.bin("kubectl"), r.bin("podload"), e.apiServer, r.path("pki"), e.webhookIP, e.webhookPort,
		e.secretDir, e.webhookPid, r.path("logs"), r.opts.Bin, r.opts.E2EDir, kwokTaint)
	return os.WriteFile(r.path("bench.env"), []byte(bench), 0o644)
}

// defaultRayVenv is where scripts/install-deps.sh --test installs Ray:
// E2E_RAY_VENV, else ${XDG_CACHE_HOME:-$HOME/.cache}/ray-webhook-e2e/ray-VERSION,
// VERSION being ray's (ray[default,serve]==VERSION) in E2E_DIR/ray/requirements.txt.
func defaultRayVenv(e2eDir string) string {
	if v := os.Getenv("E2E_RAY_VENV"); v != "" {
		return v
	}
	b, _ := os.ReadFile(filepath.Join(e2eDir, "ray", "requirements.txt"))
	version := ""
	for _, line := range strings.Split(string(b), "\n") {
		// ray[EXTRAS]==VERSION
		if extras, v, ok := strings.Cut(strings.TrimSpace(line), "]=="); ok && strings.HasPrefix(extras, "ray[") {
			version = v
		}
	}
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "ray-webhook-e2e", "ray-"+version)
}
