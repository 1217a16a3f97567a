package framework

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// DeploymentArgs is a Deployment's ray-webhook arguments without the flags a
// replica here sets itself (its address, port, certificate folder and probe
// port).
func DeploymentArgs(args []string) []string {
	var kept []string
next:
	for _, a := range args {
		for _, f := range []string{"--port=", "--bind=", "--cert-dir=", "--tls-cert=", "--tls-key=", "--probe-port="} {
			if strings.HasPrefix(a, f) {
				continue next
			}
		}
		kept = append(kept, a)
	}
	return kept
}

// installDeploy installs deploy/ as shipped: the static-certs overlay
// rendered from a copy of deploy/ and certs/ (its generate.sh writes the
// serving Secret and the caBundle patches of a throw-away CA), its Namespace,
// RBAC and Service applied, ray-webhook started as the Deployment runs it
// with the Secret's files as the kubelet mounts them and a token of its
// ServiceAccount, the Service's EndpointSlice naming it, and only then the
// webhook configurations.
func (r *Running) installDeploy() error {
	for _, ns := range []string{"default", "kube-system"} {
		if err := r.waitDefaultServiceAccount(ns); err != nil {
			return err
		}
	}
	// cert-manager's CRDs, for the dry run of the cert-manager overlay (TestInstall).
	dir, err := moduleDir(filepath.Join(r.opts.E2EDir, "crds"), "github.com/cert-manager/cert-manager")
	if err != nil {
		return err
	}
	if _, err := r.kubectl("", "create", "-f", filepath.Join(dir, "deploy", "crds")); err != nil {
		return fmt.Errorf("cert-manager's CRDs: %v", err)
	}
	// The Open Reports API's, where the periodic audit writes its policy reports (TestAudit).
	reports, err := moduleDir(filepath.Join(r.opts.E2EDir, "crds"), "github.com/openreports/reports-api")
	if err != nil {
		return err
	}
	if _, err := r.kubectl("", "create", "-f", filepath.Join(reports, "config", "crd")); err != nil {
		return fmt.Errorf("the Open Reports CRDs: %v", err)
	}
	if _, err := r.kubectl("", "wait", "--for", "condition=established", "--timeout=60s",
		"crd/certificates.cert-manager.io", "crd/issuers.cert-manager.io", "crd/reports.openreports.io"); err != nil {
		return err
	}
	items, err := r.renderDeploy()
	if err != nil {
		return err
	}
	apply := func(what string, keep func(kind string) bool) error {
		var picked []json.RawMessage
		for _, it := range items {
			var head struct{ Kind string }
			if err := json.Unmarshal(it, &head); err != nil {
				return err
			}
			if keep(head.Kind) {
				picked = append(picked, it)
			}
		}
		list, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "List", "items": picked})
		if _, err := r.kubectl(string(list), "apply", "-f", "-"); err != nil {
			return fmt.Errorf("applying deploy/'s %s: %v", what, err)
		}
		return nil
	}
	if err := apply("Namespace", func(k string) bool { return k == "Namespace" }); err != nil {
		return err
	}
	if err := apply("RBAC and Service", func(k string) bool {
		return k == "ServiceAccount" || k == "ClusterRole" || k == "ClusterRoleBinding" || k == "Service"
	}); err != nil {
		return err
	}
	token, err := r.kubectl("", "-n", webhookNamespace, "create", "token", "ray-webhook", "--duration=2h")
	if err != nil {
		return err
	}
	r.env.webhookToken = r.path("ray-webhook.token")
	if err := os.WriteFile(r.env.webhookToken, []byte(strings.TrimSpace(token)), 0o600); err != nil {
		return err
	}
	ca, err := os.ReadFile(r.path("pki", "ca.crt"))
	if err != nil {
		return err
	}
	owner, err := r.volumeOwner(items)
	if err != nil {
		return err
	}
	r.env.saDir = r.path("serviceaccount")
	if err := writeVolume(r.env.saDir, map[string][]byte{"token": []byte(strings.TrimSpace(token)), "ca.crt": ca,
		"namespace": []byte(webhookNamespace)}, owner); err != nil {
		return err
	}
	secret := map[string][]byte{}
	for _, f := range []string{"tls.crt", "tls.key", "ca.crt"} {
		if secret[f], err = os.ReadFile(filepath.Join(r.env.webhookCerts, f)); err != nil {
			return err
		}
	}
	r.env.secretDir = r.path("secret")
	if err := writeVolume(r.env.secretDir, secret, owner); err != nil {
		return err
	}
	if err := r.startWebhook(items); err != nil {
		return err
	}
	slice := fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata:
  name: %s
  namespace: %s
  labels:
    kubernetes.io/service-name: ray-webhook
    endpointslice.kubernetes.io/managed-by: e2e.ray-webhook.io
addressType: IPv4
endpoints:
- addresses: ["%s"]
  conditions: {ready: %v}
ports:
- name: https
  port: %d
  protocol: TCP
`, WebhookSlice, webhookNamespace, r.env.webhookIP, r.webhookProber.Ready(), r.env.webhookPort)
	if _, err := r.kubectl(slice, "apply", "-f", "-"); err != nil {
		return err
	}
	return apply("webhook configurations", func(k string) bool { return strings.HasSuffix(k, "WebhookConfiguration") })
}

// waitDefaultServiceAccount waits for ServiceAccount default of NS, which
// kube-controller-manager makes (the ServiceAccount admission plugin refuses
// Pods until it exists).
func (r *Running) waitDefaultServiceAccount(ns string) error {
	var err error
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		if _, err = r.kubectl("", "-n", ns, "get", "serviceaccount", "default"); err == nil {
			return nil
		}
	}
	return fmt.Errorf("ServiceAccount default in %s: %v", ns, err)
}

// renderDeploy renders deploy/overlays/static-certs and cert-manager from a
// copy (static-certs writes generated/ beside itself) and returns the objects
// of static-certs; RENDERED is them as one JSON List.
func (r *Running) renderDeploy() ([]json.RawMessage, error) {
	src := r.path("src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, err
	}
	for _, d := range []string{"deploy", "certs"} {
		if out, err := exec.Command("cp", "-r", filepath.Join(r.opts.Repo, d), src+"/").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("copying %s: %v: %s", d, err, out)
		}
	}
	os.RemoveAll(filepath.Join(src, "deploy", "overlays", "static-certs", "generated"))
	os.RemoveAll(filepath.Join(src, "certs", "out"))
	gen := exec.Command("bash", filepath.Join(src, "deploy", "overlays", "static-certs", "generate.sh"))
	if out, err := gen.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("static-certs/generate.sh: %v: %s", err, lastLines(string(out), 10))
	}
	r.env.deploySrc = src
	r.env.webhookCerts = filepath.Join(src, "deploy", "overlays", "static-certs", "generated", "certs")
	for _, overlay := range []string{"static-certs", "cert-manager"} {
		out, err := r.kubectl("", "kustomize", filepath.Join(src, "deploy", "overlays", overlay))
		if err != nil {
			return nil, err
		}
		if err := os.WriteFile(r.path("rendered-"+overlay+".yaml"), []byte(out), 0o644); err != nil {
			return nil, err
		}
	}
	cmd := exec.Command(r.bin("kubectl"), "--kubeconfig", r.path("kubeconfig"), "create", "--dry-run=client",
		"-o", "json", "-f", r.path("rendered-static-certs.yaml"))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("the rendered static-certs overlay does not parse: %v: %s", err, stderr.String())
	}
	// One JSON document per object (a List is flattened).
	var items []json.RawMessage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for dec.More() {
		var doc json.RawMessage
		if err := dec.Decode(&doc); err != nil {
			return nil, fmt.Errorf("the rendered static-certs overlay: %v", err)
		}
		var list struct {
			Kind  string
			Items []json.RawMessage
		}
		if err := json.Unmarshal(doc, &list); err != nil {
			return nil, err
		}
		if list.Kind == "List" {
			items = append(items, list.Items...)
		} else {
			items = append(items, doc)
		}
	}
	list, _ := json.MarshalIndent(map[string]any{"apiVersion": "v1", "kind": "List", "items": items}, "", "  ")
	r.env.rendered = r.path("rendered-static-certs.json")
	return items, os.WriteFile(r.env.rendered, list, 0o644)
}

// startWebhook starts the shipped replica: the Deployment's container
// arguments and CLUSTER_DOMAIN, with its address, port, certificate folder
// and probe port this run's; the lookup gets the API server on loopback and
// the ServiceAccount volume. It is probed as the kubelet would (prober.go)
// for as long as this process runs, and started when its readinessProbe
// first succeeds.
func (r *Running) startWebhook(items []json.RawMessage) error {
	var deployment struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct {
						Args []string
						Env  []struct{ Name, Value string }
					}
				}
			}
		}
	}
	var raw json.RawMessage
	for _, it := range items {
		var head struct{ Kind string }
		if json.Unmarshal(it, &head) == nil && head.Kind == "Deployment" {
			if err := json.Unmarshal(it, &deployment); err != nil {
				return err
			}
			raw = it
		}
	}
	if raw == nil || len(deployment.Spec.Template.Spec.Containers) == 0 {
		return fmt.Errorf("deploy/ renders no Deployment with a container")
	}
	var err error
	if r.env.probes, err = probeSpecOf(raw); err != nil {
		return err
	}
	container := deployment.Spec.Template.Spec.Containers[0]
	args := DeploymentArgs(container.Args)
	r.env.webhookArgs = args
	r.env.clusterDomain = "cluster.local"
	for _, e := range container.Env {
		if e.Name == "CLUSTER_DOMAIN" && e.Value != "" {
			r.env.clusterDomain = e.Value
		}
	}
	if r.env.webhookPort, err = portOn(r.env.webhookIP); err != nil {
		return err
	}
	probePort, err := portOn(r.env.webhookIP)
	if err != nil {
		return err
	}
	serve := append([]string{"--bind", r.env.webhookIP, "--port", itoa(r.env.webhookPort)}, args...)
	serve = append(serve, "--probe-port="+itoa(probePort))
	command := func() (*exec.Cmd, error) {
		return serverCommand(r.image, r.env.rayWebhook, r.env.apiServer, r.env.secretDir, r.env.saDir, r.env.apiServer,
			serve, []string{"CLUSTER_DOMAIN=" + r.env.clusterDomain})
	}
	shipped := &shippedReplica{r: r, command: command}
	if err := shipped.launch(""); err != nil {
		return err
	}
	kube, err := r.kube()
	if err != nil {
		return err
	}
	version, err := kube.Discovery().ServerVersion()
	if err != nil {
		return err
	}
	slice := ServiceSlice
	r.webhookProber = newProber("ray-webhook", r.env.webhookIP, probePort, r.env.probes, kubeProbeAgent(version.GitVersion), shipped,
		func(ready bool) {
			if err := setEndpointReady(kube, slice, r.env.webhookIP, ready); err != nil {
				appendLog(r.path("logs", "ray-webhook.log"), "publishing ready=%v in EndpointSlice %s/%s: %v", ready, slice.Namespace, slice.Name, err)
			}
		})
	registerProber(r.env.webhookIP, r.webhookProber)
	if err := r.webhookProber.waitReady(30 * time.Second); err != nil {
		return err
	}
	r.logf("ray-webhook serving on %s:%d (args: %s)", r.env.webhookIP, r.env.webhookPort, strings.Join(args, " "))
	return nil
}

// volumeOwner is how the kubelet would leave the Deployment's volumes for a
// replica running from the image: its Secret volume's defaultMode, its Pod's
// fsGroup as their group (the ServiceAccount volume, whose own default is
// 0644, is left the same way). Without the image the server runs as root.
func (r *Running) volumeOwner(items []json.RawMessage) (volumeOwner, error) {
	if r.image == nil {
		r.env.volumeMode, r.env.volumeGroup = rootOnly.mode, rootOnly.gid
		return rootOnly, nil
	}
	var d struct {
		Kind string
		Spec struct {
			Template struct {
				Spec struct {
					SecurityContext struct{ FSGroup *int64 }
					Volumes         []struct {
						Secret *struct{ DefaultMode *int32 }
					}
				}
			}
		}
	}
	for _, it := range items {
		if json.Unmarshal(it, &d) == nil && d.Kind == "Deployment" {
			break
		}
	}
	pod := d.Spec.Template.Spec
	owner := volumeOwner{mode: 0o644, gid: -1}
	if pod.SecurityContext.FSGroup != nil {
		owner.gid = int(*pod.SecurityContext.FSGroup)
	}
	for _, v := range pod.Volumes {
		if v.Secret != nil && v.Secret.DefaultMode != nil {
			owner.mode = os.FileMode(*v.Secret.DefaultMode)
		}
	}
	r.env.volumeMode, r.env.volumeGroup = owner.mode, owner.gid
	return owner, nil
}

// shippedReplica is the shipped replica's process as the prober keeps it:
// logging to LOGS/ray-webhook.log (a restart appends), recorded in
// WORK/processes.
type shippedReplica struct {
	r       *Running
	command func() (*exec.Cmd, error)
	mu      sync.Mutex
	d       *daemon
}

func (s *shippedReplica) launch(header string) error {
	cmd, err := s.command()
	if err != nil {
		return err
	}
	d, err := launch("ray-webhook", s.r.path("logs", "ray-webhook.log"), cmd, s.r.opts.Detached, header)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.d = d
	s.mu.Unlock()
	s.r.env.webhookPid = d.cmd.Process.Pid
	return s.r.addProcess(d)
}

func (s *shippedReplica) current() *daemon {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.d
}

func (s *shippedReplica) restart(grace time.Duration) error {
	s.current().stopGracefully(grace)
	return s.launch(fmt.Sprintf("# %s: restarted after a failed livenessProbe\n", time.Now().UTC().Format(time.RFC3339)))
}
