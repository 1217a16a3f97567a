package e2e

// TestCertManager: the real cert-manager (controller and cainjector of
// github.com/cert-manager/cert-manager v1.21.2, installed as its chart says;
// framework.StartCertManager) issuing ray-webhook's serving certificate.
//
//	overlay                     kubectl apply -k deploy/overlays/cert-manager over the running install:
//	                            the CA and serving Certificates become Ready, the Secret is a leaf of
//	                            that CA for the Service's name, the cainjector writes the CA into every
//	                            webhook's caBundle, the replica serves the issued leaf (the Secret
//	                            volume followed as the kubelet does) and kube-apiserver's calls succeed
//	  renewal-under-load        the serving Secret deleted while Ray Pods are created: cert-manager
//	                            issues a new leaf of the same CA, the replica serves it, 0 Pods fail and
//	                            kube-apiserver counts 0 failed or refused calls
//	helm-chart                  the same issuance and serving from charts/ray-webhook's default
//	                            (certificates.source=cert-manager), applied as helm template renders it
//	kuberay-v1.7-mtls           the Issuers and Certificates KubeRay v1.7.0's mTLS controller makes for
//	                            its sample ray-cluster.mtls.yaml (testdata/, which says where they come
//	                            from) are issued, and the head's certificate verifies for exactly the
//	                            name ray-webhook writes into a worker's FQ_RAY_IP: a worker that dials
//	                            the head by that name passes its hostname check. The sample's RayCluster
//	                            itself cannot run here: v1.6.2's CRD has no spec.tlsOptions and its
//	                            operator no mTLS controller; v1.7.0 cannot be built from the proxy.
//
// Each subtest puts deploy/'s static-certs install back when it ends.

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ray-webhook/tests/e2e/framework"
)

const (
	servingSecret = "ray-webhook-serving-cert"
	servingName   = "ray-webhook.ray-webhook-system.svc"
)

func TestCertManager(t *testing.T) {
	framework.Attach(t)
	framework.StartCertManager(t)
	t.Run("overlay", testCertManagerOverlay)
	t.Run("helm-chart", testCertManagerChart)
	t.Run("kuberay-v1.7-mtls", testCertManagerKubeRayMTLS)
}

func testCertManagerOverlay(t *testing.T) {
	c := framework.Attach(t)
	certManagerTakeOver(t, func() {
		framework.MustKubectl(t, "", "apply", "-k", filepath.Join(c.Repo, "deploy", "overlays", "cert-manager"))
	})
	t.Run("renewal-under-load", testCertManagerRenewal)
}

func testCertManagerChart(t *testing.T) {
	rendered := chartRender(t)
	if !strings.Contains(rendered, "kind: Certificate") {
		t.Fatalf("the chart's default rendering has no Certificate")
	}
	certManagerTakeOver(t, func() { framework.MustKubectl(t, rendered, "apply", "-f", "-") })
}

// certManagerTakeOver applies an install whose certificate cert-manager
// issues (APPLY) over deploy/'s static-certs install, and asserts that the
// issued certificate is what is served and trusted. When t ends the
// static-certs install is back and serving.
func certManagerTakeOver(t *testing.T, apply func()) {
	t.Helper()
	c := framework.Attach(t)
	// Cleanups run last-registered first: the volume back to the static
	// pair (FollowSecret), then cert-manager's objects gone and deploy/'s
	// Secret and configurations applied again.
	t.Cleanup(func() { certManagerRestore(t) })
	framework.FollowSecret(t, c.WebhookCertDir, "ray-webhook-system", servingSecret)
	staticLeaf := availabilityFingerprintPEM(t, framework.ReadVolume(t, c.WebhookCertDir)["tls.crt"])
	apply()
	framework.MustKubectl(t, "", "wait", "-n", "ray-webhook-system", "--for=condition=Ready", "--timeout=120s",
		"certificate/ray-webhook-ca", "certificate/"+servingSecret)
	leaf, ca := certManagerIssued(t)
	if leaf == staticLeaf {
		t.Fatalf("the serving Secret still holds the static-certs pair")
	}
	certManagerWaitInjected(t, ca, 60*time.Second)
	availabilityWaitServed(t, []string{c.WebhookIP}, c.WebhookPort, leaf, 30*time.Second)
	// A dry-run Ray worker through kube-apiserver reaches the replica: the
	// call verified the issued leaf against the injected caBundle.
	framework.RoutedTo(t, c.WebhookLog)
	caSum := availabilityFingerprintPEM(t, ca)
	t.Logf("cert-manager issued leaf %x (CA %x), injected into every caBundle, served and trusted", leaf[:8], caSum[:8])
}

// certManagerIssued checks the serving Secret cert-manager wrote: a leaf for
// the Service's name signed by the CA of Secret ray-webhook-ca, whose
// ca.crt is that CA. It returns the leaf's SHA-256 and the CA's PEM.
func certManagerIssued(t *testing.T) ([32]byte, []byte) {
	t.Helper()
	c := framework.Attach(t)
	ctx := context.Background()
	s, err := c.Kube.CoreV1().Secrets("ray-webhook-system").Get(ctx, servingSecret, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Secret %s: %v", servingSecret, err)
	}
	caSecret, err := c.Kube.CoreV1().Secrets("ray-webhook-system").Get(ctx, "ray-webhook-ca", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Secret ray-webhook-ca: %v", err)
	}
	if !bytes.Equal(s.Data["ca.crt"], caSecret.Data["tls.crt"]) {
		t.Errorf("the serving Secret's ca.crt is not the CA Certificate's")
	}
	if s.Annotations["cert-manager.io/certificate-name"] != servingSecret {
		t.Errorf("the serving Secret is not cert-manager's (annotations %v)", s.Annotations)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caSecret.Data["tls.crt"]) {
		t.Fatalf("the CA Secret's tls.crt is no certificate")
	}
	block, _ := pem.Decode(s.Data["tls.crt"])
	if block == nil {
		t.Fatalf("the serving Secret's tls.crt is no PEM")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("the serving certificate: %v", err)
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: servingName, Roots: roots,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("the serving certificate does not verify for %s against the CA: %v", servingName, err)
	}
	return availabilityFingerprintPEM(t, s.Data["tls.crt"]), s.Data["ca.crt"]
}

// certManagerWaitInjected waits until every webhook of both configurations
// carries CA as its caBundle.
func certManagerWaitInjected(t *testing.T, ca []byte, timeout time.Duration) {
	t.Helper()
	c := framework.Attach(t)
	framework.Eventually(t, timeout, 500*time.Millisecond, func() (bool, string) {
		ctx := context.Background()
		m, err := c.Kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, "ray-webhook", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		v, err := c.Kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, "ray-webhook", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		for _, w := range m.Webhooks {
			if !bytes.Equal(w.ClientConfig.CABundle, ca) {
				return false, "mutating " + w.Name + ": caBundle is not the issued CA"
			}
		}
		for _, w := range v.Webhooks {
			if !bytes.Equal(w.ClientConfig.CABundle, ca) {
				return false, "validating " + w.Name + ": caBundle is not the issued CA"
			}
		}
		return true, ""
	})
}

func testCertManagerRenewal(t *testing.T) {
	c := framework.Attach(t)
	ctx := context.Background()
	ns := framework.NewNamespace(t, "e2e-cm-renew")
	oldLeaf, ca := certManagerIssued(t)
	before := apiserverReading(t)
	load := startPodload(t, ns, 20, 4, 0, 10000)
	time.Sleep(4 * time.Second)
	// Renewal forced as the suggestion allows without cmctl: the
	// Secret deleted, cert-manager's trigger controller issues it again
	// (rotationPolicy Always: a new key).
	if err := c.Kube.CoreV1().Secrets("ray-webhook-system").Delete(ctx, servingSecret, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting Secret %s: %v", servingSecret, err)
	}
	deleted := time.Now()
	framework.Eventually(t, 60*time.Second, 250*time.Millisecond, func() (bool, string) {
		s, err := c.Kube.CoreV1().Secrets("ray-webhook-system").Get(ctx, servingSecret, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, "not issued again yet"
		} else if err != nil {
			return false, err.Error()
		}
		if len(s.Data["tls.crt"]) == 0 {
			return false, "issued Secret has no tls.crt yet"
		}
		return true, ""
	})
	newLeaf, newCA := certManagerIssued(t)
	if newLeaf == oldLeaf {
		t.Fatalf("the Secret was issued again with the same certificate")
	}
	if !bytes.Equal(newCA, ca) {
		t.Errorf("the renewal changed the CA")
	}
	availabilityWaitServed(t, []string{c.WebhookIP}, c.WebhookPort, newLeaf, 15*time.Second)
	served := time.Since(deleted)
	covered := load.running()
	r := load.wait(t)
	calls := podCallsSince(t, before, apiserverReading(t))
	t.Logf("new leaf served %.1f s after the Secret's deletion; podload created %d, failed %d in %.1f s (outlasted the renewal: %v); kube-apiserver: %s",
		served.Seconds(), r.Created, r.Failed, r.Seconds, covered, calls)
	if r.Created == 0 || r.Failed != 0 {
		t.Errorf("created %d, failed %d: %s", r.Created, r.Failed, truncate(string(r.Failures), 400))
	}
	if calls.Rejected != 0 || calls.FailedOpen != 0 {
		t.Errorf("kube-apiserver counted failed or refused calls across the renewal: %s", calls)
	}
	if calls.Calls < float64(r.Created) {
		t.Errorf("kube-apiserver counted %g calls for %d Pods created", calls.Calls, r.Created)
	}
	if !covered {
		t.Errorf("the load ended before the new leaf was served: nothing was proven under load")
	}
	certManagerWaitInjected(t, ca, 5*time.Second)
}

// certManagerRestore puts back what the bring-up left: no cert-manager
// objects in ray-webhook-system, no Secrets of the webhook's certificate
// (the bring-up writes the static pair straight into the volume; a Secret
// left with cert-manager's annotations would pass for issued later) and
// deploy/'s webhook configurations.
func certManagerRestore(t *testing.T) {
	c := framework.Attach(t)
	if r := framework.Kubectl(t, "", "delete", "-n", "ray-webhook-system", "--ignore-not-found",
		"certificates.cert-manager.io,issuers.cert-manager.io,certificaterequests.cert-manager.io", "--all"); r.Err != nil {
		t.Errorf("deleting cert-manager's objects: %v: %s", r.Err, r.Combined())
	}
	for _, name := range []string{"ray-webhook-ca", servingSecret} {
		err := c.Kube.CoreV1().Secrets("ray-webhook-system").Delete(context.Background(), name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting Secret %s: %v", name, err)
		}
	}
	chartRestoreDeploy(t)
}

func testCertManagerKubeRayMTLS(t *testing.T) {
	c := framework.Attach(t)
	ctx := context.Background()
	ns := framework.NewNamespace(t, "e2e-cm-mtls")
	b, err := os.ReadFile(filepath.Join(c.E2EDir, "testdata", "kuberay-v1.7-mtls-certificates.yaml"))
	if err != nil {
		t.Fatalf("%v", err)
	}
	uid8 := (randomName() + randomName())[:8]
	objects := strings.NewReplacer("NAMESPACE", ns, "UID8", uid8).Replace(string(b))
	framework.MustKubectl(t, objects, "apply", "-f", "-")
	framework.MustKubectl(t, "", "wait", "-n", ns, "--for=condition=Ready", "--timeout=120s",
		"certificate/ray-ca-certificate-raycluster-mtls", "certificate/ray-head-cert-raycluster-mtls",
		"certificate/ray-worker-cert-raycluster-mtls")
	secret := func(name string) map[string][]byte {
		s, err := c.Kube.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("Secret %s/%s: %v", ns, name, err)
		}
		return s.Data
	}
	caPEM := secret("raycluster-mtls-ca-secret-" + uid8)["tls.crt"]
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatalf("the CA Secret holds no certificate")
	}
	leaf := func(name string) *x509.Certificate {
		data := secret(name)
		if !bytes.Equal(data["ca.crt"], caPEM) {
			t.Errorf("Secret %s: ca.crt is not the cluster's CA", name)
		}
		block, _ := pem.Decode(data["tls.crt"])
		if block == nil {
			t.Fatalf("Secret %s: tls.crt is no PEM", name)
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatalf("Secret %s: %v", name, err)
		}
		return cert
	}
	head, worker := leaf("ray-head-secret-raycluster-mtls"), leaf("ray-worker-secret-raycluster-mtls")
	if _, err := worker.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: roots,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the workers' certificate is not a client certificate of the cluster's CA: %v", err)
	}

	// A worker of raycluster-mtls as v1.7.0 builds it, with its TLS volume
	// (ray-tls at /etc/ray/tls), created as a dry run through kube-apiserver.
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "raycluster-mtls-small-group-worker", Labels: map[string]string{
			"ray.io/node-type": "worker", "ray.io/cluster": "raycluster-mtls", "ray.io/group": "small-group"}},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.55.1",
				Command:      []string{"/bin/bash", "-lc", "--"},
				Args:         []string{"ray start --address=raycluster-mtls-head-svc:6379 --num-cpus=1 --block"},
				VolumeMounts: []corev1.VolumeMount{{Name: "ray-tls", MountPath: "/etc/ray/tls", ReadOnly: true}}}},
			Volumes: []corev1.Volume{{Name: "ray-tls", VolumeSource: corev1.VolumeSource{
				Secret: &corev1.SecretVolumeSource{SecretName: "ray-worker-secret-raycluster-mtls"}}}},
		},
	}
	got, err := c.Kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatalf("a dry-run worker of raycluster-mtls: %v", err)
	}
	fq := envValues(got.Spec.Containers[0], "FQ_RAY_IP")
	if len(fq) != 1 {
		t.Fatalf("ray-webhook did not give the worker one FQ_RAY_IP: %v", fq)
	}
	if _, err := head.Verify(x509.VerifyOptions{DNSName: fq[0], Roots: roots,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Errorf("the head's certificate (DNS names %v) does not verify for the worker's FQ_RAY_IP %s: %v", head.DNSNames, fq[0], err)
	}
	t.Logf("issued: CA, head %v, workers %v; the worker's FQ_RAY_IP %s verifies against the head's certificate",
		head.DNSNames, worker.DNSNames, fq[0])
}
