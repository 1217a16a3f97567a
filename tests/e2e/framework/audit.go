package framework

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
	"time"
)

// AuditEvent is the part of an audit.k8s.io/v1 Event of kube-apiserver's
// audit log (AUDIT_LOG, policy manifests/audit-policy.yaml) that tests read.
type AuditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource  string `json:"resource"`
		Namespace string `json:"namespace"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Annotations              map[string]string `json:"annotations"`
	RequestReceivedTimestamp time.Time         `json:"requestReceivedTimestamp"`
}

// AuditEvents are the events of the audit log so far (a line still being
// written is left out).
func AuditEvents(t testing.TB) []AuditEvent {
	t.Helper()
	f, err := os.Open(Attach(t).AuditLog)
	if err != nil {
		t.Fatalf("kube-apiserver's audit log: %v", err)
	}
	defer f.Close()
	var events []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e AuditEvent
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			events = append(events, e)
		}
	}
	return events
}
