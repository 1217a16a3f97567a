package e2e

// TestRequest: what kube-apiserver really sends a webhook of the shipped
// configurations.
//
//	recorded    (8) EndpointSlice ray-webhook-e2e pointed at the recorder (a stand-in webhook that
//	            writes each request down and allows it) for one dry-run Ray worker Pod: the
//	            request arrives, a POST whose path ends in ?timeout=Ns (the configuration's
//	            timeoutSeconds), an AdmissionReview of admission.k8s.io/v1 for a dry-run CREATE;
//	            every record is printed

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ray-webhook/tests/e2e/framework"
)

// requestTimeout is the query kube-apiserver adds to a webhook's path.
var requestTimeout = regexp.MustCompile(`\?timeout=[0-9]+s$`)

// requestRecord is the part of a recorder line the check reads.
type requestRecord struct {
	Method        string `json:"method"`
	RequestURI    string `json:"request_uri"`
	TLSVersion    string `json:"tls_version"`
	ReviewVersion string `json:"review_api_version"`
	DryRun        *bool  `json:"dry_run"`
	Operation     string `json:"operation"`
}

func TestRequest(t *testing.T) {
	framework.Attach(t)
	t.Run("recorded", requestTestRecorded)
}

// requestLines are the non-empty lines of FILE.
func requestLines(file string) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func requestTestRecorded(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "request")
	dir := t.TempDir()
	out := filepath.Join(dir, "requests.jsonl")
	port := framework.FreePort(t, c.WebhookIP2)
	addr := net.JoinHostPort(c.WebhookIP2, strconv.Itoa(port))
	logFile, err := os.Create(filepath.Join(c.Logs, "go-recorder-"+ns+".log"))
	if err != nil {
		t.Fatalf("%v", err)
	}
	defer logFile.Close()
	// The serving pair of the shipped replica: kube-apiserver trusts it for
	// the Service's name. The recorder exits by itself after 2 requests or 40 s.
	cmd := exec.Command(filepath.Join(c.Bin, "recorder"), "-addr", addr,
		"-cert", filepath.Join(c.WebhookCertDir, "tls.crt"), "-key", filepath.Join(c.WebhookCertDir, "tls.key"),
		"-out", out, "-max", "2", "-timeout", "40s")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the recorder: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	framework.Eventually(t, 10*time.Second, 100*time.Millisecond, func() (bool, string) {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			return false, fmt.Sprintf("recorder not listening on %s: %v", addr, err)
		}
		conn.Close()
		return true, ""
	})
	// Back to the shipped replica when t ends (PointSlice registers it).
	framework.PointSlice(t, port, framework.Endpoint{IP: c.WebhookIP2, Ready: true})

	// A dry-run worker Pod (each try a new name) until the recorder has
	// written down two requests: kube-apiserver's endpoint resolver follows
	// the slice through an informer, so the first tries may still reach the
	// shipped replica.
	cluster := "request-rc"
	for i := 0; i < 20 && len(requestLines(out)) < 2; i++ {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{
				Name:   fmt.Sprintf("%s-workers-worker-%d", cluster, i),
				Labels: map[string]string{"ray.io/cluster": cluster, "ray.io/node-type": "worker", "ray.io/group": "workers"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-worker", Image: "rayproject/ray:2.52.0"}}},
		}
		_, _ = c.Kube.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		time.Sleep(500 * time.Millisecond)
	}
	lines := requestLines(out)
	if len(lines) == 0 {
		t.Fatalf("nothing arrived at the recorder on %s (its log %s)", addr, logFile.Name())
	}
	matched := false
	for _, l := range lines {
		t.Log(l)
		var r requestRecord
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Errorf("recorder line %q: %v", l, err)
			continue
		}
		if r.Method != "POST" || !requestTimeout.MatchString(r.RequestURI) {
			t.Errorf("recorded %s %s, want a POST whose path ends in ?timeout=Ns", r.Method, r.RequestURI)
			continue
		}
		if r.TLSVersion == "" || r.ReviewVersion != "admission.k8s.io/v1" || r.DryRun == nil || !*r.DryRun || r.Operation != "CREATE" {
			t.Errorf("recorded request %s: TLS %q, review %q, dryRun %v, operation %q; want TLS, admission.k8s.io/v1, a dry-run CREATE",
				r.RequestURI, r.TLSVersion, r.ReviewVersion, r.DryRun, r.Operation)
			continue
		}
		matched = true
	}
	if !matched {
		t.Errorf("no recorded request is a POST whose path ends in ?timeout=Ns")
	}
}
