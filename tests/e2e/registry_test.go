package e2e

// TestRegistry: the image as users pull it. The framework started
// distribution's registry on loopback (the suite's CA), pushed the image with
// scripts/image.sh --push --sign (a cosign key pair made for the run, no
// transparency log), verified its signature, pulled it by digest and runs
// the replicas from what it pulled (framework/registry.go).
//
//	pulled-by-digest        the registry serves the manifest at that digest and the version's tag,
//	                        and the archive the replicas were unpacked from holds that manifest
//	attestations            cosign verify-attestation: the SPDX SBOM and the SLSA provenance, each an
//	                        in-toto statement about that digest, naming ray-webhook's version and the
//	                        commit of the image's revision label
//	tampered-tag            the image with a layer changed, pushed under the same tag: cosign verify of
//	                        the tag fails for want of a signature, the original digest still verifies

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"ray-webhook/tests/e2e/framework"
)

func TestRegistry(t *testing.T) {
	c := framework.Attach(t)
	if c.Registry == nil || c.Image == nil {
		t.Fatalf("the cluster runs ray-webhook from %s, not from its image in the registry (E2E_IMAGE unset)", c.RayWebhook)
	}
	reg := c.Registry
	repository, digest, _ := strings.Cut(reg.ImageRef, "@")
	version := projectVersion(t, c.Repo)

	t.Run("pulled-by-digest", func(t *testing.T) {
		for _, ref := range []string{digest, version} {
			got := registryManifestDigest(t, reg, ref)
			if got != digest {
				t.Fatalf("https://%s/v2/ray-webhook/manifests/%s: Docker-Content-Digest %q, want %s", reg.Host, ref, got, digest)
			}
		}
		index, err := exec.Command("tar", "-xOf", c.Image.Archive, "index.json").Output()
		if err != nil {
			t.Fatalf("the archive the replicas run from (%s): %v", c.Image.Archive, err)
		}
		if !strings.Contains(string(index), `"digest":"`+digest+`"`) {
			t.Fatalf("%s's index.json does not name %s: %s", c.Image.Archive, digest, index)
		}
		t.Logf("%s: the tag %s and the pulled archive are the manifest %s", repository, version, digest)
	})

	t.Run("attestations", func(t *testing.T) {
		labels := imageLabels(t, c.Image.Archive)
		for _, kind := range []struct{ cosignType, predicateType string }{
			{"spdxjson", "https://spdx.dev/Document"},
			{"slsaprovenance1", "https://slsa.dev/provenance/v1"},
		} {
			statement := verifiedStatement(t, c, reg.ImageRef, kind.cosignType)
			if statement.PredicateType != kind.predicateType {
				t.Fatalf("--type %s: predicateType %q, want %q", kind.cosignType, statement.PredicateType, kind.predicateType)
			}
			if len(statement.Subject) != 1 || "sha256:"+statement.Subject[0].Digest["sha256"] != digest {
				t.Fatalf("--type %s: the statement is about %+v, not %s", kind.cosignType, statement.Subject, digest)
			}
			switch kind.cosignType {
			case "spdxjson":
				var sbom struct {
					Packages []struct {
						SPDXID, VersionInfo string
					}
				}
				if err := json.Unmarshal(statement.Predicate, &sbom); err != nil {
					t.Fatalf("the SBOM: %v", err)
				}
				found := false
				for _, p := range sbom.Packages {
					found = found || (p.SPDXID == "SPDXRef-Package-ray-webhook" && p.VersionInfo == version)
				}
				if !found || len(sbom.Packages) < 2 {
					t.Fatalf("the attested SBOM names no ray-webhook %s among %d packages", version, len(sbom.Packages))
				}
				t.Logf("SBOM: %d packages, ray-webhook %s among them", len(sbom.Packages), version)
			case "slsaprovenance1":
				var provenance struct {
					BuildDefinition struct {
						ExternalParameters struct {
							Source     struct{ Revision string }
							Dockerfile string
						}
						InternalParameters struct {
							Debian struct{ ArchiveDate string }
						}
					}
				}
				if err := json.Unmarshal(statement.Predicate, &provenance); err != nil {
					t.Fatalf("the provenance: %v", err)
				}
				b := provenance.BuildDefinition
				revision := labels["org.opencontainers.image.revision"]
				if b.ExternalParameters.Source.Revision != revision || revision == "" ||
					b.ExternalParameters.Dockerfile != "Dockerfile" || b.InternalParameters.Debian.ArchiveDate == "" {
					t.Fatalf("the provenance %+v does not name the image's revision %q, its Dockerfile and the Debian archive's date", b, revision)
				}
				t.Logf("provenance: revision %s, Debian archive of %s", revision, b.InternalParameters.Debian.ArchiveDate)
			}
		}
	})

	t.Run("tampered-tag", func(t *testing.T) {
		// The image as pulled, with one file more in a layer of its own, under the version's tag.
		tampered := filepath.Join(t.TempDir(), "tampered.oci.tar")
		ctr := "e2e-tampered"
		_ = exec.Command("buildah", "rm", ctr).Run() // a copy a stopped run left
		defer exec.Command("buildah", "rm", ctr).Run()
		mustRun(t, "buildah", "from", "--quiet", "--name", ctr, "oci-archive:"+c.Image.Archive)
		root := strings.TrimSpace(mustRun(t, "buildah", "mount", ctr))
		if err := os.WriteFile(filepath.Join(root, "usr", "local", "bin", "not-ray-webhook"), []byte("#!/bin/false\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		mustRun(t, "buildah", "umount", ctr)
		mustRun(t, "buildah", "commit", "--quiet", "--disable-compression=false", ctr, "oci-archive:"+tampered)
		tag := repository + ":" + version
		push := func(archive string) {
			mustRun(t, "skopeo", "copy", "--quiet", "--preserve-digests", "--dest-cert-dir", reg.CertsDir,
				"oci-archive:"+archive, "docker://"+tag)
		}
		push(tampered)
		defer push(c.Image.Archive) // the tag back on the signed image
		if got := registryManifestDigest(t, reg, version); got == digest || got == "" {
			t.Fatalf("the tampered image was not pushed under %s (it serves %q)", tag, got)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		out, err := reg.Verify(ctx, filepath.Join(c.Bin, "cosign"), tag)
		if err == nil {
			t.Fatalf("cosign verify of the tampered %s passed:\n%s", tag, out)
		}
		if !strings.Contains(out, "no signatures found") && !strings.Contains(out, "no matching signatures") {
			t.Fatalf("cosign verify of the tampered %s failed for another reason than a missing signature: %v\n%s", tag, err, out)
		}
		t.Logf("tampered %s: cosign verify fails: %s", tag, lastLinesOf(out, 1))
		if out, err := reg.Verify(ctx, filepath.Join(c.Bin, "cosign"), reg.ImageRef); err != nil {
			t.Fatalf("cosign verify of the signed digest %s after the tampering: %v\n%s", reg.ImageRef, err, out)
		}
	})
}

// registryManifestDigest is the Docker-Content-Digest the registry answers for
// ray-webhook's manifest REF (a tag or a digest).
func registryManifestDigest(t *testing.T, reg *framework.Registry, ref string) string {
	t.Helper()
	tlsConfig, err := framework.TrustCA(reg.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil, TLSClientConfig: tlsConfig}}
	req, _ := http.NewRequest(http.MethodHead, "https://"+reg.Host+"/v2/ray-webhook/manifests/"+ref, nil)
	req.Header.Set("Accept", "application/vnd.oci.image.manifest.v1+json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("HEAD %s: %v", req.URL, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HEAD %s: %s", req.URL, resp.Status)
	}
	return resp.Header.Get("Docker-Content-Digest")
}

// inTotoStatement is an attestation's payload.
type inTotoStatement struct {
	PredicateType string `json:"predicateType"`
	Subject       []struct {
		Name   string
		Digest map[string]string
	} `json:"subject"`
	Predicate json.RawMessage `json:"predicate"`
}

// verifiedStatement is the one attestation of TYPE on REF that cosign
// verify-attestation accepts with the run's public key.
func verifiedStatement(t *testing.T, c *framework.Cluster, ref, cosignType string) inTotoStatement {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(c.Bin, "cosign"), "verify-attestation", "--key", c.Registry.CosignPub,
		"--insecure-ignore-tlog=true", "--type", cosignType, ref)
	cmd.Env = append(os.Environ(), "SSL_CERT_FILE="+c.Registry.CAFile)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("cosign verify-attestation --type %s %s: %v\n%s", cosignType, ref, err, stderr.String())
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 1 {
		t.Fatalf("cosign verify-attestation --type %s: %d attestations, want 1", cosignType, len(lines))
	}
	var envelope struct{ PayloadType, Payload string }
	if err := json.Unmarshal([]byte(lines[0]), &envelope); err != nil {
		t.Fatalf("cosign verify-attestation --type %s: %v: %s", cosignType, err, truncate(lines[0], 300))
	}
	payload, err := base64.StdEncoding.DecodeString(envelope.Payload)
	if err != nil || envelope.PayloadType != "application/vnd.in-toto+json" {
		t.Fatalf("cosign verify-attestation --type %s: payload type %q (%v)", cosignType, envelope.PayloadType, err)
	}
	var statement inTotoStatement
	if err := json.Unmarshal(payload, &statement); err != nil {
		t.Fatalf("the in-toto statement: %v", err)
	}
	return statement
}

// imageLabels are the labels of the image configuration in an OCI archive.
func imageLabels(t *testing.T, archive string) map[string]string {
	t.Helper()
	out := mustRun(t, "skopeo", "inspect", "--config", "oci-archive:"+archive)
	var config struct {
		Config struct{ Labels map[string]string } `json:"config"`
	}
	if err := json.Unmarshal([]byte(out), &config); err != nil {
		t.Fatalf("skopeo inspect --config %s: %v", archive, err)
	}
	return config.Config.Labels
}

// projectVersion is CMakeLists.txt's project() version, the one version source.
func projectVersion(t *testing.T, repo string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repo, "CMakeLists.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "project(ray-webhook VERSION "); ok {
			return strings.Fields(rest)[0]
		}
	}
	t.Fatal("CMakeLists.txt names no project(ray-webhook VERSION ...)")
	return ""
}

func mustRun(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v: %s", name, strings.Join(args, " "), err, truncate(string(out), 500))
	}
	return string(out)
}
