package framework

// Counted, not waited for: a check that only waits for the end state passes
// when a call was refused and retried on the way. These helpers read the
// counters that record each call instead, kube-apiserver's admission webhook
// metrics and a ray-webhook replica's own.
//
// The contract: a Scrape is one reading of every sample a /metrics page
// served (Prometheus text format, the comments dropped). after.Delta(before,
// ...) is how much a counter rose between two readings of the same process,
// and an error when it went down: the process restarted in between, so what
// happened in between is unknown and must not be read as "nothing".

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The admission webhook metrics of kube-apiserver (k8s.io/apiserver's
// pkg/admission/metrics), each labelled by the webhook's name in its
// configuration and by type ("admit" for a mutating webhook, "validating").
const (
	// One per call, reinvocations included; labels operation, code ("200"
	// answered; the HTTP status of a refusal or a failed call) and rejected
	// ("true" when the call failed the request: a denial, or a failed call
	// under failurePolicy Fail).
	WebhookRequestTotal = "apiserver_admission_webhook_request_total"
	// One per rejected call; labels operation, error_type (no_error: the
	// webhook denied; calling_webhook_error: no usable answer;
	// apiserver_internal_error) and rejection_code.
	WebhookRejectionCount = "apiserver_admission_webhook_rejection_count"
	// One per failed call let through by failurePolicy Ignore.
	WebhookFailOpenCount = "apiserver_admission_webhook_fail_open_count"
)

// Sample is one line of a /metrics page.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Scrape is every sample of one reading of a /metrics page.
type Scrape []Sample

// ParseMetrics reads the Prometheus text format: comment lines are skipped,
// a timestamp after the value is ignored.
func ParseMetrics(text string) (Scrape, error) {
	var out Scrape
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("metrics line %d %q: %w", i+1, line, err)
		}
		out = append(out, s)
	}
	return out, nil
}

func parseSample(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	end := strings.IndexAny(line, "{ \t")
	if end <= 0 {
		return s, errors.New("no metric name and value")
	}
	s.Name, line = line[:end], line[end:]
	if line[0] == '{' {
		line = line[1:]
		for {
			line = strings.TrimLeft(line, " \t")
			if line == "" {
				return s, errors.New("label set not closed")
			}
			if line[0] == '}' {
				line = line[1:]
				break
			}
			eq := strings.IndexByte(line, '=')
			if eq <= 0 {
				return s, errors.New("label without a name or an =")
			}
			key := strings.TrimSpace(line[:eq])
			line = strings.TrimLeft(line[eq+1:], " \t")
			value, used, err := unquoteLabelValue(line)
			if err != nil {
				return s, fmt.Errorf("label %s: %w", key, err)
			}
			s.Labels[key] = value
			line = strings.TrimLeft(line[used:], " \t")
			line = strings.TrimPrefix(line, ",")
		}
	}
	fields := strings.Fields(line)
	if len(fields) != 1 && len(fields) != 2 {
		return s, fmt.Errorf("want a value and at most a timestamp, got %q", line)
	}
	v, err := strconv.ParseFloat(fields[0], 64) // also +Inf, -Inf, NaN
	if err != nil {
		return s, fmt.Errorf("value: %w", err)
	}
	s.Value = v
	return s, nil
}

// unquoteLabelValue reads the quoted value at the start of S (escapes \\,
// \" and \n) and says how many bytes it took.
func unquoteLabelValue(s string) (string, int, error) {
	if s == "" || s[0] != '"' {
		return "", 0, errors.New("value not quoted")
	}
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		switch c := s[i]; c {
		case '"':
			return b.String(), i + 1, nil
		case '\\':
			if i+1 == len(s) {
				return "", 0, errors.New("value not closed")
			}
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case '\\', '"':
				b.WriteByte(s[i])
			default:
				return "", 0, fmt.Errorf("unknown escape \\%c", s[i])
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, errors.New("value not closed")
}

func (s Sample) matches(name string, match map[string]string) bool {
	if s.Name != name {
		return false
	}
	for k, v := range match {
		if s.Labels[k] != v {
			return false
		}
	}
	return true
}

// Sum is the sum of the samples named NAME whose labels include every pair
// of MATCH (0 when there is none: a labelled counter appears only once it
// has counted).
func (s Scrape) Sum(name string, match map[string]string) float64 {
	var sum float64
	for _, x := range s {
		if x.matches(name, match) {
			sum += x.Value
		}
	}
	return sum
}

// By is Sum per value of label KEY.
func (s Scrape) By(name, key string, match map[string]string) map[string]float64 {
	out := map[string]float64{}
	for _, x := range s {
		if x.matches(name, match) {
			out[x.Labels[key]] += x.Value
		}
	}
	return out
}

// Delta is how much counter NAME (Sum over MATCH) rose from reading BEFORE
// to this one. Per series: a series that went down (a restart) is an error,
// even when others rose by as much.
func (s Scrape) Delta(before Scrape, name string, match map[string]string) (float64, error) {
	prior := map[string]float64{}
	for _, x := range before {
		if x.matches(name, match) {
			prior[seriesKey(x.Labels)] += x.Value
		}
	}
	var sum float64
	for _, x := range s {
		if !x.matches(name, match) {
			continue
		}
		key := seriesKey(x.Labels)
		d := x.Value - prior[key]
		delete(prior, key)
		if d < 0 {
			return 0, fmt.Errorf("%s{%s} went down from %g to %g: its process restarted between the two readings", name, key, x.Value-d, x.Value)
		}
		sum += d
	}
	for key, v := range prior {
		if v != 0 {
			return 0, fmt.Errorf("%s{%s} (%g) is gone from the second reading: its process restarted between the two readings", name, key, v)
		}
	}
	return sum, nil
}

// DeltaBy is Delta per value of label KEY, without the values that did not move.
func (s Scrape) DeltaBy(before Scrape, name, key string, match map[string]string) (map[string]float64, error) {
	out := map[string]float64{}
	for value := range s.By(name, key, match) {
		m := map[string]string{key: value}
		for k, v := range match {
			m[k] = v
		}
		d, err := s.Delta(before, name, m)
		if err != nil {
			return nil, err
		}
		if d != 0 {
			out[value] = d
		}
	}
	return out, nil
}

func seriesKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", k, labels[k])
	}
	return b.String()
}

// APIServerMetrics reads kube-apiserver's /metrics with the admin
// credentials (system:masters may read it; RBAC's system:monitoring role
// would be the least a scraper needs).
func APIServerMetrics(ctx context.Context, c *Cluster) (Scrape, error) {
	body, err := c.Kube.CoreV1().RESTClient().Get().AbsPath("/metrics").
		SetHeader("Accept", "text/plain").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("GET /metrics of kube-apiserver: %w", err)
	}
	return ParseMetrics(string(body))
}

// ReplicaMetrics reads the /metrics of the ray-webhook replica at IP:PORT,
// on its TLS port as a scraper would, trusting the cluster's webhook CA
// under the Service's name.
func ReplicaMetrics(ctx context.Context, c *Cluster, ip string, port int) (Scrape, error) {
	ca, err := os.ReadFile(filepath.Join(c.WebhookCertDir, "ca.crt"))
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in %s", filepath.Join(c.WebhookCertDir, "ca.crt"))
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: pool, ServerName: "ray-webhook." + webhookNamespace + ".svc"}}
	defer transport.CloseIdleConnections()
	client := &http.Client{Timeout: 10 * time.Second, Transport: transport}
	url := "https://" + net.JoinHostPort(ip, itoa(port)) + "/metrics"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return ParseMetrics(string(body))
}

// WebhookCalls is what kube-apiserver counted for one webhook of a
// configuration, by its name there, summed over operations and types.
type WebhookCalls struct {
	Calls    float64            // WebhookRequestTotal
	Rejected float64            // of those, rejected="true"
	ByCode   map[string]float64 // WebhookRequestTotal by code
	// Rejections by "error_type/rejection_code" (WebhookRejectionCount):
	// "no_error/403" is a denial, "calling_webhook_error/..." a call that
	// got no usable answer.
	Rejections map[string]float64
	FailedOpen float64 // WebhookFailOpenCount
}

// WebhookCallsSince is what kube-apiserver counted for webhook NAME between
// reading BEFORE and reading AFTER.
func WebhookCallsSince(before, after Scrape, name string) (WebhookCalls, error) {
	var w WebhookCalls
	var err error
	byName := map[string]string{"name": name}
	if w.Calls, err = after.Delta(before, WebhookRequestTotal, byName); err != nil {
		return w, err
	}
	if w.Rejected, err = after.Delta(before, WebhookRequestTotal, map[string]string{"name": name, "rejected": "true"}); err != nil {
		return w, err
	}
	if w.ByCode, err = after.DeltaBy(before, WebhookRequestTotal, "code", byName); err != nil {
		return w, err
	}
	if w.FailedOpen, err = after.Delta(before, WebhookFailOpenCount, byName); err != nil {
		return w, err
	}
	w.Rejections = map[string]float64{}
	kinds := map[[2]string]bool{}
	for _, x := range after {
		if x.matches(WebhookRejectionCount, byName) {
			kinds[[2]string{x.Labels["error_type"], x.Labels["rejection_code"]}] = true
		}
	}
	for k := range kinds {
		d, err := after.Delta(before, WebhookRejectionCount,
			map[string]string{"name": name, "error_type": k[0], "rejection_code": k[1]})
		if err != nil {
			return w, err
		}
		if d != 0 {
			w.Rejections[k[0]+"/"+k[1]] = d
		}
	}
	return w, nil
}

func (w WebhookCalls) String() string {
	return fmt.Sprintf("%g calls (by code %s), %g rejected (%s), %g failed open",
		w.Calls, formatCounts(w.ByCode), w.Rejected, formatCounts(w.Rejections), w.FailedOpen)
}

func formatCounts(m map[string]float64) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s: %g", k, m[k])
	}
	return strings.Join(parts, ", ")
}
