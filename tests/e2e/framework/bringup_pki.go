package framework

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"time"
)

// makePKI writes PKI/: a CA, kube-apiserver's serving pair, the admin client
// pair (group system:masters), the image registry's serving pair and the
// service-account signing key pair,
// valid for two days. ray-webhook's own pair comes from deploy/ (installDeploy).
func (r *Running) makePKI() error {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	caTemplate := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "e2e-kubernetes-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(48 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	if err != nil {
		return err
	}
	ca, _ := x509.ParseCertificate(caDER)
	if err := writePEM(r.path("pki", "ca.crt"), "CERTIFICATE", caDER, 0o644); err != nil {
		return err
	}
	if err := writeKey(r.path("pki", "ca.key"), caKey); err != nil {
		return err
	}
	leaf := func(name string, t *x509.Certificate) error {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return err
		}
		t.SerialNumber = serial()
		t.NotBefore, t.NotAfter = now.Add(-time.Hour), now.Add(48*time.Hour)
		t.BasicConstraintsValid = true
		t.KeyUsage = x509.KeyUsageDigitalSignature
		der, err := x509.CreateCertificate(rand.Reader, t, ca, &key.PublicKey, caKey)
		if err != nil {
			return err
		}
		if err := writePEM(r.path("pki", name+".crt"), "CERTIFICATE", der, 0o600); err != nil {
			return err
		}
		return writeKey(r.path("pki", name+".key"), key)
	}
	// 127.0.0.1 also as the IPv4-mapped IPv6 address ::ffff:7f00:1, which a
	// client that dials https://[::ffff:7f00:1] checks against 16 bytes; Go
	// writes a mapped address as 4, so the extension is written here.
	san, err := subjectAltNames([]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
		"kubernetes.default.svc.cluster.local"}, []net.IP{net.ParseIP("127.0.0.1").To4(), net.ParseIP("::ffff:7f00:1"),
		net.ParseIP(serviceIP).To4()})
	if err != nil {
		return err
	}
	if err := leaf("apiserver", &x509.Certificate{
		Subject:         pkix.Name{CommonName: "kube-apiserver"},
		ExtKeyUsage:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		ExtraExtensions: []pkix.Extension{san},
	}); err != nil {
		return err
	}
	// The image registry's serving pair (registry.go), on loopback.
	registrySAN, err := subjectAltNames([]string{"localhost"}, []net.IP{net.ParseIP("127.0.0.1").To4()})
	if err != nil {
		return err
	}
	if err := leaf("registry", &x509.Certificate{
		Subject:         pkix.Name{CommonName: "e2e-registry"},
		ExtKeyUsage:     []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		ExtraExtensions: []pkix.Extension{registrySAN},
	}); err != nil {
		return err
	}
	if err := leaf("admin", &x509.Certificate{
		Subject:     pkix.Name{CommonName: "e2e-admin", Organization: []string{"system:masters"}},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}); err != nil {
		return err
	}
	// kube-apiserver signs and verifies ServiceAccount tokens with this pair.
	sa, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	if err := writeKey(r.path("pki", "sa.key"), sa); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return err
	}
	return writePEM(r.path("pki", "sa.pub"), "PUBLIC KEY", pub, 0o644)
}

// subjectAltNames is the extension (RFC 5280 4.2.1.6) naming DNS names and
// the IP addresses as given: 4 or 16 bytes each.
func subjectAltNames(dns []string, ips []net.IP) (pkix.Extension, error) {
	var names []asn1.RawValue
	for _, d := range dns {
		names = append(names, asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 2, Bytes: []byte(d)})
	}
	for _, ip := range ips {
		names = append(names, asn1.RawValue{Class: asn1.ClassContextSpecific, Tag: 7, Bytes: []byte(ip)})
	}
	value, err := asn1.Marshal(names)
	return pkix.Extension{Id: asn1.ObjectIdentifier{2, 5, 29, 17}, Value: value}, err
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

func writePEM(path, kind string, der []byte, mode os.FileMode) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), mode)
}

func writeKey(path string, key crypto.Signer) error {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(path, "PRIVATE KEY", der, 0o600)
}

// writeKubeconfig is the admin's kubeconfig for kube-apiserver on 127.0.0.1:port.
func (r *Running) writeKubeconfig(port int) error {
	b64 := func(name string) (string, error) {
		b, err := os.ReadFile(r.path("pki", name))
		return base64.StdEncoding.EncodeToString(b), err
	}
	ca, err := b64("ca.crt")
	if err != nil {
		return err
	}
	crt, err := b64("admin.crt")
	if err != nil {
		return err
	}
	key, err := b64("admin.key")
	if err != nil {
		return err
	}
	config := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: e2e
  cluster:
    server: https://127.0.0.1:%d
    certificate-authority-data: %s
users:
- name: e2e-admin
  user:
    client-certificate-data: %s
    client-key-data: %s
contexts:
- name: e2e
  context: {cluster: e2e, user: e2e-admin}
current-context: e2e
`, port, ca, crt, key)
	return os.WriteFile(r.path("kubeconfig"), []byte(config), 0o600)
}
