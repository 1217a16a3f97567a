package framework

import (
	"strings"
	"testing"
)

// Two readings of kube-apiserver's admission webhook counters, trimmed: in
// between, the Pod webhook answered 3 more calls and denied 1, and a call
// of the RayCluster webhook failed open.
const (
	metricsBefore = `# HELP apiserver_admission_webhook_request_total [ALPHA] Admission webhook request total.
# TYPE apiserver_admission_webhook_request_total counter
apiserver_admission_webhook_request_total{code="200",name="mutate.pods.ray-webhook.io",operation="CREATE",rejected="false",type="admit"} 10
apiserver_admission_webhook_request_total{code="200",name="validate.rayclusters.ray-webhook.io",operation="UPDATE",rejected="false",type="validating"} 4
apiserver_admission_webhook_fail_open_count{name="validate.rayclusters.ray-webhook.io",type="validating"} 0
go_gc_duration_seconds{quantile="0.5"} 1.5e-05 1700000000000
`
	metricsAfter = `# HELP apiserver_admission_webhook_request_total [ALPHA] Admission webhook request total.
apiserver_admission_webhook_request_total{code="200",name="mutate.pods.ray-webhook.io",operation="CREATE",rejected="false",type="admit"} 12
apiserver_admission_webhook_request_total{code="403",name="mutate.pods.ray-webhook.io",operation="CREATE",rejected="true",type="admit"} 1
apiserver_admission_webhook_request_total{code="200",name="validate.rayclusters.ray-webhook.io",operation="UPDATE",rejected="false",type="validating"} 4
apiserver_admission_webhook_rejection_count{error_type="no_error",name="mutate.pods.ray-webhook.io",operation="CREATE",rejection_code="403",type="admit"} 1
apiserver_admission_webhook_fail_open_count{name="validate.rayclusters.ray-webhook.io",type="validating"} 1
some_gauge{path="a \"quoted\" \\ value, with {braces}\n"} +Inf
`
)

func mustParse(t *testing.T, text string) Scrape {
	t.Helper()
	s, err := ParseMetrics(text)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestParseMetrics(t *testing.T) {
	after := mustParse(t, metricsAfter)
	if len(after) != 6 {
		t.Fatalf("%d samples, want 6: %v", len(after), after)
	}
	last := after[5]
	if want := "a \"quoted\" \\ value, with {braces}\n"; last.Name != "some_gauge" || last.Labels["path"] != want {
		t.Errorf("escaped label value: %q %q, want some_gauge %q", last.Name, last.Labels["path"], want)
	}
	if got := after.Sum(WebhookRequestTotal, map[string]string{"name": "mutate.pods.ray-webhook.io"}); got != 13 {
		t.Errorf("Sum of the Pod webhook's calls %g, want 13", got)
	}
	before := mustParse(t, metricsBefore)
	if got := before.Sum("go_gc_duration_seconds", nil); got != 1.5e-05 {
		t.Errorf("a sample with a timestamp: %g, want 1.5e-05", got)
	}
	for _, bad := range []string{
		`name{a="b" 1`, `name{a=b} 1`, `name{a="b\x"} 1`, `name{a="b"}`, `name 1 2 3`, `name one`,
	} {
		if _, err := ParseMetrics(bad); err == nil {
			t.Errorf("ParseMetrics(%q) took it", bad)
		}
	}
}

func TestWebhookCallsSince(t *testing.T) {
	before, after := mustParse(t, metricsBefore), mustParse(t, metricsAfter)
	pods, err := WebhookCallsSince(before, after, "mutate.pods.ray-webhook.io")
	if err != nil {
		t.Fatal(err)
	}
	if pods.Calls != 3 || pods.Rejected != 1 || pods.ByCode["200"] != 2 || pods.ByCode["403"] != 1 ||
		pods.Rejections["no_error/403"] != 1 || len(pods.Rejections) != 1 || pods.FailedOpen != 0 {
		t.Errorf("the Pod webhook: %v; want 3 calls (200: 2, 403: 1), 1 rejected (no_error/403: 1), 0 failed open", pods)
	}
	clusters, err := WebhookCallsSince(before, after, "validate.rayclusters.ray-webhook.io")
	if err != nil {
		t.Fatal(err)
	}
	if clusters.Calls != 0 || clusters.Rejected != 0 || len(clusters.ByCode) != 0 || clusters.FailedOpen != 1 {
		t.Errorf("the RayCluster webhook: %v; want 0 calls, 1 failed open", clusters)
	}
	// The other way round every counter went down: a restart, not a figure.
	if _, err := WebhookCallsSince(after, before, "mutate.pods.ray-webhook.io"); err == nil ||
		!strings.Contains(err.Error(), "restarted") {
		t.Errorf("counters that went down: err %v, want one that says the process restarted", err)
	}
}
