package framework

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// The image as users pull it: distribution's registry (tests/e2e/registry,
// pinned) on loopback with a serving pair from the suite's CA; the image
// pushed there by scripts/image.sh --push, signed by a cosign key pair made
// for the run, its SBOM and provenance attached as attestations (no
// transparency log); `cosign verify` with the public key before anything
// runs; then pulled by digest and unpacked, exactly what was pulled.

// Registry is the suite's registry and what was pushed to it.
type Registry struct {
	Host      string // 127.0.0.1:PORT
	CAFile    string // the suite's CA, which signed the registry's pair
	CertsDir  string // CAFile as containers-certs.d wants it (skopeo --cert-dir)
	CosignKey string // the run's cosign private key (empty password)
	CosignPub string // and its public key
	ImageRef  string // Host/ray-webhook@sha256:..., what the replicas run
}

// startRegistry runs the registry and pushes, signs, verifies and pulls the image.
func (r *Running) startRegistry() error {
	if r.opts.Image == "" {
		return nil
	}
	port, err := loopbackPort()
	if err != nil {
		return err
	}
	reg := &Registry{Host: fmt.Sprintf("127.0.0.1:%d", port), CAFile: r.path("pki", "ca.crt"),
		CertsDir: r.path("registry", "certs.d"), CosignKey: r.path("registry", "cosign.key"),
		CosignPub: r.path("registry", "cosign.pub")}
	if err := os.MkdirAll(r.path("registry", "data"), 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(reg.CertsDir, 0o755); err != nil {
		return err
	}
	ca, err := os.ReadFile(reg.CAFile)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(reg.CertsDir, "ca.crt"), ca, 0o644); err != nil {
		return err
	}
	template, err := os.ReadFile(filepath.Join(r.opts.E2EDir, "registry", "config.yml.tmpl"))
	if err != nil {
		return err
	}
	config := strings.NewReplacer("@ROOT@", r.path("registry", "data"), "@ADDR@", reg.Host,
		"@CERT@", r.path("pki", "registry.crt"), "@KEY@", r.path("pki", "registry.key")).Replace(string(template))
	configFile := r.path("registry", "config.yml")
	if err := os.WriteFile(configFile, []byte(config), 0o600); err != nil {
		return err
	}
	d, err := r.spawn("registry", nil, r.bin("registry"), "serve", configFile)
	if err != nil {
		return err
	}
	tlsConfig, err := TrustCA(reg.CAFile)
	if err != nil {
		return err
	}
	if err := d.waitReady(tlsProbe("https://"+reg.Host+"/v2/", tlsConfig), 30*time.Second); err != nil {
		return err
	}
	r.registry = reg

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// The run's key pair (cosign generate-key-pair writes cosign.key and cosign.pub in its folder).
	if out, err := reg.cosign(ctx, r.bin("cosign"), r.path("registry"), "generate-key-pair"); err != nil {
		return fmt.Errorf("cosign generate-key-pair: %v: %s", err, lastLines(out, 5))
	}
	push := exec.CommandContext(ctx, "bash", filepath.Join(r.opts.Repo, "scripts", "image.sh"), "--push", reg.Host,
		"--archive", r.opts.Image, "--ca-file", reg.CAFile, "--sign", reg.CosignKey)
	push.Env = append(os.Environ(), "COSIGN="+r.bin("cosign"), "COSIGN_PASSWORD=")
	var stderr strings.Builder
	push.Stderr = &stderr
	out, err := push.Output()
	if err != nil {
		return fmt.Errorf("scripts/image.sh --push: %v: %s", err, lastLines(stderr.String(), 10))
	}
	reg.ImageRef = strings.TrimSpace(string(out))
	if !strings.HasPrefix(reg.ImageRef, reg.Host+"/ray-webhook@sha256:") {
		return fmt.Errorf("scripts/image.sh --push printed %q, not %s/ray-webhook@DIGEST", reg.ImageRef, reg.Host)
	}
	if out, err := reg.Verify(ctx, r.bin("cosign"), reg.ImageRef); err != nil {
		return fmt.Errorf("the pushed image's signature: %v: %s", err, lastLines(out, 5))
	}
	pulled := r.path("registry", "pulled.oci.tar")
	if out, err := exec.CommandContext(ctx, "skopeo", "copy", "--quiet", "--preserve-digests", "--src-cert-dir", reg.CertsDir,
		"docker://"+reg.ImageRef, "oci-archive:"+pulled).CombinedOutput(); err != nil {
		return fmt.Errorf("skopeo copy docker://%s: %v: %s", reg.ImageRef, err, lastLines(string(out), 5))
	}
	im, err := openImage(pulled, r.path("image"))
	if err != nil {
		return err
	}
	if digest := reg.ImageRef[strings.Index(reg.ImageRef, "@")+1:]; im.Digest != digest {
		return fmt.Errorf("the pulled archive holds manifest %s, not %s", im.Digest, digest)
	}
	r.image = im
	r.logf("ray-webhook from %s (pushed from %s, signature verified): entrypoint %q as user %s",
		reg.ImageRef, r.opts.Image, im.Entrypoint, im.User)
	return nil
}

// cosign runs cosign in DIR with the suite's CA trusted and the key's empty password.
func (reg *Registry) cosign(ctx context.Context, cosign, dir string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, cosign, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "COSIGN_PASSWORD=", "SSL_CERT_FILE="+reg.CAFile)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// Verify is `cosign verify` of REF with the run's public key, offline.
func (reg *Registry) Verify(ctx context.Context, cosign, ref string) (string, error) {
	return reg.cosign(ctx, cosign, "", "verify", "--key", reg.CosignPub, "--insecure-ignore-tlog=true", ref)
}

// VerifyAttestation is `cosign verify-attestation --type TYPE` of REF with the run's public key, offline.
func (reg *Registry) VerifyAttestation(ctx context.Context, cosign, ref, predicateType string) (string, error) {
	return reg.cosign(ctx, cosign, "", "verify-attestation", "--key", reg.CosignPub, "--insecure-ignore-tlog=true",
		"--type", predicateType, ref)
}

// TrustCA is a TLS client configuration that trusts the CA in FILE alone.
func TrustCA(file string) (*tls.Config, error) {
	ca, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("%s holds no certificate", file)
	}
	return &tls.Config{RootCAs: pool}, nil
}
