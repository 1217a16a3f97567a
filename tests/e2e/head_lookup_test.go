package e2e

// TestHeadLookup: the second-head lookup against the real kube-apiserver,
// with Pods the test writes itself (no operator; they have no toleration, so
// they stay Pending): which stored heads it counts, what it sends, and how it
// refuses. Each check in its own namespace.
//
//	deny-mode               (11l) a replica with --head-lookup-failure=deny and a volume of its own: a
//	                        rejected token (401) refuses the second head with 503 and the reason, a
//	                        token without RBAC (403) even a cluster's first head; with deploy/'s token
//	                        the first head is admitted and the second refused (409)
//	warn-mode-example       (11m) deploy/examples/warn-mode as rendered, its lookup dialling
//	                        https://[::ffff:7f00:1]:PORT: a second head with another fixed name is
//	                        admitted with both rules' warnings, the lookup's naming the live head
//	terminating-head        (11a) a head kept stored by a finalizer and deleted is not live: a second
//	                        head refused while it lived is admitted; its deterministic name stays
//	                        taken (409 AlreadyExists) until the finalizer goes
//	failed-head             (11b) a head set Failed (pods/status) is not live
//	succeeded-head          (11c) a head set Succeeded (pods/status) is not live
//	mixed-heads             (11d) Failed, Terminating and Running heads: a new head is refused naming
//	                        the Running one and its phase, none of the others
//	selector-and-namespace  (11e) a worker, another cluster's head and a head in another namespace are
//	                        not a cluster's heads
//	audit-log               (11f) every lookup of 11a to 11e was one list of Pods in the Pod's namespace
//	                        by deploy/'s ServiceAccount, with the head selector and nothing else,
//	                        allowed by deploy/'s ClusterRoleBinding, answered 200; as many as logged
//	rejected-token          (11g) the volume's token rejected (401): admitted, with the warning
//	token-without-rbac      (11h) a ServiceAccount without deploy/'s RBAC (403): admitted, with the
//	                        warning; the log and the audit log name that ServiceAccount
//	empty-token             (11i) an empty token file: the lookup is system:anonymous's (403)
//	unknown-ca              (11j) another CA: the TLS handshake fails, no request reaches kube-apiserver
//	volume-swapped-back     (11k) deploy/'s token and the right CA swapped back in: the lookup works
//	                        again (409), also for 4 heads sent at once; the same process throughout
//
// 11l and 11m run first: the framework runs one replica at a time, and the
// replica of 11a to 11k (shipped flags, a ServiceAccount volume of its own,
// which 11g to 11k change under it as the kubelet does) lives for the rest of
// the test.

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"ray-webhook/tests/e2e/framework"
)

const (
	// lookupHold keeps a deleted Pod stored, Terminating.
	lookupHold = "e2e.ray-webhook.io/hold"
	// lookupNoRBAC is a ServiceAccount no binding names; the audit policy
	// (manifests/audit-policy.yaml) records its lists of Pods.
	lookupNoRBAC   = "e2e-no-rbac"
	lookupSANS     = "ray-webhook-system"
	lookupSAUser   = "system:serviceaccount:ray-webhook-system:ray-webhook"
	lookupNoRBACSA = "system:serviceaccount:ray-webhook-system:" + lookupNoRBAC
	lookupDenied   = `admission webhook "mutate.pods.ray-webhook.io" denied the request`
)

// lookupSuite is what the subtests of TestHeadLookup share.
type lookupSuite struct {
	kube        kubernetes.Interface
	warn        *framework.Warnings
	deployToken string // a token of deploy/'s ServiceAccount ray-webhook
	noRBACToken string // a token of ServiceAccount e2e-no-rbac

	sa  string             // the ServiceAccount volume of r
	r   *framework.Replica // the replica of 11a to 11k
	pid int                // its process, as started

	mu       sync.Mutex
	okNS     []string // the namespaces of 11a to 11e: every lookup there is by deploy/'s token
	selectNS string   // 11e's namespace
}

func TestHeadLookup(t *testing.T) {
	c := framework.Attach(t)
	s := &lookupSuite{}
	s.kube, s.warn = framework.KubeWithWarnings(t)
	b, err := os.ReadFile(c.WebhookToken)
	if err != nil {
		t.Fatalf("deploy/'s token: %v", err)
	}
	s.deployToken = strings.TrimSpace(string(b))
	s.noRBACToken = lookupNoRBACToken(t)

	t.Run("deny-mode", s.testDenyMode)
	t.Run("warn-mode-example", s.testWarnMode)

	s.sa = framework.NewVolume(t, framework.ServiceAccountVolume(t, s.deployToken, nil))
	s.r = framework.StartReplica(t, framework.ReplicaOptions{Name: "ray-webhook-lookup", SADir: s.sa})
	s.pid = s.r.Process.Pid()

	t.Run("terminating-head", s.testTerminating)
	t.Run("failed-head", func(t *testing.T) { s.testFinished(t, "rc-failed", corev1.PodFailed) })
	t.Run("succeeded-head", func(t *testing.T) { s.testFinished(t, "rc-succeeded", corev1.PodSucceeded) })
	t.Run("mixed-heads", s.testMixed)
	t.Run("selector-and-namespace", s.testSelector)
	t.Run("audit-log", s.testAudit)
	t.Run("rejected-token", func(t *testing.T) {
		s.testRefusedLookup(t, []byte("e2e-not-a-token-"+lookupRandom()), nil,
			"the Kubernetes API answered 401: Unauthorized", "answered 401: Unauthorized", "")
	})
	t.Run("token-without-rbac", func(t *testing.T) {
		s.testRefusedLookup(t, []byte(s.noRBACToken), nil, "the Kubernetes API answered 403: pods is forbidden",
			`User \"`+lookupNoRBACSA+`\" cannot list`, lookupNoRBACSA)
	})
	t.Run("empty-token", func(t *testing.T) {
		s.testRefusedLookup(t, []byte{}, nil, "the Kubernetes API answered 403: pods is forbidden",
			`User \"system:anonymous\" cannot list`, "system:anonymous")
	})
	t.Run("unknown-ca", func(t *testing.T) {
		s.testRefusedLookup(t, []byte(s.deployToken), lookupWebhookCA(t),
			"no answer from the Kubernetes API at https://127.0.0.1", "TLS verification failed", "")
	})
	t.Run("volume-swapped-back", s.testSwappedBack)
}

// lookupNoRBACToken is a token of ServiceAccount e2e-no-rbac (created here
// unless it exists, and then deleted when the test ends).
func lookupNoRBACToken(t *testing.T) string {
	t.Helper()
	c := framework.Attach(t)
	ctx := context.Background()
	_, err := c.Kube.CoreV1().ServiceAccounts(lookupSANS).Create(ctx,
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: lookupNoRBAC}}, metav1.CreateOptions{})
	switch {
	case err == nil:
		t.Cleanup(func() {
			err := c.Kube.CoreV1().ServiceAccounts(lookupSANS).Delete(context.Background(), lookupNoRBAC, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting ServiceAccount %s/%s: %v", lookupSANS, lookupNoRBAC, err)
			}
		})
	case !apierrors.IsAlreadyExists(err):
		t.Fatalf("creating ServiceAccount %s/%s: %v", lookupSANS, lookupNoRBAC, err)
	}
	tok := strings.TrimSpace(framework.MustKubectl(t, "", "-n", lookupSANS, "create", "token", lookupNoRBAC, "--duration=1h"))
	if tok == "" {
		t.Fatalf("kubectl create token %s printed nothing", lookupNoRBAC)
	}
	return tok
}

// lookupWebhookCA is the CA of the webhook's own serving certificate: it did
// not sign kube-apiserver's.
func lookupWebhookCA(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(framework.Attach(t).WebhookCerts + "/ca.crt")
	if err != nil {
		t.Fatalf("the webhook's CA: %v", err)
	}
	return b
}

func lookupRandom() string {
	return fmt.Sprintf("%d", time.Now().UnixNano()%1000000)
}

// lookupPod is a Ray Pod of RayCluster CLUSTER as KubeRay labels it (NAME
// ending in "-": generateName).
func lookupPod(name, cluster, nodeType string) *corev1.Pod {
	group := "workers"
	if nodeType == "head" {
		group = "headgroup"
	}
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{
			"ray.io/cluster": cluster, "ray.io/node-type": nodeType, "ray.io/group": group}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "ray-" + nodeType, Image: "rayproject/ray:2.52.0"}}},
	}
	if strings.HasSuffix(name, "-") {
		p.GenerateName = name
	} else {
		p.Name = name
	}
	return p
}

// lookupExempt is a head the head-name rule exempts (Autoscaler v2 on Ray
// 2.46), so that the second-head lookup alone decides, whatever its name.
func lookupExempt(name, cluster string) *corev1.Pod {
	p := lookupPod(name, cluster, "head")
	p.Spec.Containers[0].Image = "rayproject/ray:2.46.0"
	p.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "RAY_enable_autoscaler_v2", Value: "1"}}
	return p
}

// create creates P in NS (a server dry run when dryRun) and returns the
// error and the warnings the API server relayed.
func (s *lookupSuite) create(ns string, p *corev1.Pod, dryRun bool) ([]string, error) {
	s.warn.Take()
	opts := metav1.CreateOptions{}
	if dryRun {
		opts.DryRun = []string{metav1.DryRunAll}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := s.kube.CoreV1().Pods(ns).Create(ctx, p, opts)
	return s.warn.Take(), err
}

// mustCreate stores P in NS and fails t unless it is admitted.
func (s *lookupSuite) mustCreate(t *testing.T, ns string, p *corev1.Pod) []string {
	t.Helper()
	w, err := s.create(ns, p, false)
	if err != nil {
		t.Fatalf("creating Pod %s/%s%s: %v", ns, p.Name, p.GenerateName, err)
	}
	if len(p.Finalizers) > 0 {
		lookupReleaseAtEnd(t, ns, p.Name)
	}
	return w
}

// lookupRefusal is "" when err is the lookup's refusal (409) naming LIVE as
// the live head, else what err is.
func lookupRefusal(err error, liveHead string) string {
	if err == nil {
		return "admitted"
	}
	msg := err.Error()
	if apierrors.IsConflict(err) && strings.Contains(msg, lookupDenied) &&
		strings.Contains(msg, `already has a live head Pod "`+liveHead+`"`) {
		return ""
	}
	return fmt.Sprintf("%v (reason %s, code %d)", err, apierrors.ReasonForError(err), lookupCode(err))
}

func lookupCode(err error) int32 {
	if st, ok := err.(apierrors.APIStatus); ok {
		return st.Status().Code
	}
	return 0
}

// mustRefuse fails t unless the server dry run of P in NS is refused (409) naming LIVE.
func (s *lookupSuite) mustRefuse(t *testing.T, ns string, p *corev1.Pod, liveHead string) string {
	t.Helper()
	_, err := s.create(ns, p, true)
	if why := lookupRefusal(err, liveHead); why != "" {
		t.Fatalf("dry run of head %s/%s: want the lookup's 409 naming live head %q, got: %s", ns, p.Name, liveHead, why)
	}
	return err.Error()
}

// mustAdmit fails t unless the server dry run of P in NS is admitted with no
// lookup failure's warning; it returns the warnings.
func (s *lookupSuite) mustAdmit(t *testing.T, ns string, p *corev1.Pod) []string {
	t.Helper()
	w, err := s.create(ns, p, true)
	if err != nil {
		t.Fatalf("dry run of head %s/%s: want it admitted, got: %v", ns, p.Name, err)
	}
	for _, x := range w {
		if strings.Contains(x, "could not check") {
			t.Fatalf("dry run of head %s/%s admitted, but the lookup failed: Warning: %s", ns, p.Name, x)
		}
	}
	return w
}

func lookupSetPhase(t *testing.T, ns, name string, phase corev1.PodPhase) {
	t.Helper()
	c := framework.Attach(t)
	patch := fmt.Sprintf(`{"status":{"phase":%q}}`, phase)
	if _, err := c.Kube.CoreV1().Pods(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch),
		metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("setting status.phase of Pod %s/%s to %s: %v", ns, name, phase, err)
	}
}

// lookupReleaseAtEnd removes the finalizers of Pod NS/NAME when t ends, so
// that the namespace can go.
func lookupReleaseAtEnd(t *testing.T, ns, name string) {
	c := framework.Attach(t)
	t.Cleanup(func() {
		if err := lookupUnhold(c, ns, name); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("removing the finalizer of Pod %s/%s: %v", ns, name, err)
		}
	})
}

func lookupUnhold(c *framework.Cluster, ns, name string) error {
	_, err := c.Kube.CoreV1().Pods(ns).Patch(context.Background(), name, types.MergePatchType,
		[]byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
	return err
}

func lookupDelete(t *testing.T, ns, name string) {
	t.Helper()
	if err := framework.Attach(t).Kube.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting Pod %s/%s: %v", ns, name, err)
	}
}

// lookupState is NAME=PHASE, and /Terminating while it has a deletionTimestamp.
func lookupState(p *corev1.Pod) string {
	s := p.Name + "=" + string(p.Status.Phase)
	if p.DeletionTimestamp != nil {
		s += "/Terminating"
	}
	return s
}

func lookupGet(t *testing.T, ns, name string) (*corev1.Pod, error) {
	return framework.Attach(t).Kube.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
}

func (s *lookupSuite) okNamespace(t *testing.T, prefix string) string {
	ns := framework.NewNamespace(t, prefix)
	s.mu.Lock()
	s.okNS = append(s.okNS, ns)
	s.mu.Unlock()
	return ns
}

// 11a
func (s *lookupSuite) testTerminating(t *testing.T) {
	c := framework.Attach(t)
	ns := s.okNamespace(t, "e2e-lookup-term")
	head := lookupPod("rc-term-head", "rc-term", "head")
	head.Finalizers = []string{lookupHold}
	s.mustCreate(t, ns, head)
	s.mustRefuse(t, ns, lookupExempt("rc-term-head-v2", "rc-term"), "rc-term-head")

	// A Pod with no node is deleted at once (k8s.io/kubernetes
	// pkg/registry/core/pod/strategy.go CheckGracefulDelete: grace 0 when
	// spec.nodeName is empty); the finalizer keeps it stored with a
	// deletionTimestamp (k8s.io/apiserver pkg/registry/generic/registry/store.go Delete).
	lookupDelete(t, ns, "rc-term-head")
	p, err := lookupGet(t, ns, "rc-term-head")
	if err != nil {
		t.Fatalf("rc-term-head after its delete: want it stored (finalizer %s), got %v", lookupHold, err)
	}
	if p.DeletionTimestamp == nil || p.Status.Phase != corev1.PodPending {
		t.Fatalf("rc-term-head after its delete: %s, want Pending/Terminating", lookupState(p))
	}
	w := s.mustAdmit(t, ns, lookupExempt("rc-term-head-v2", "rc-term"))
	if len(w) > 0 {
		t.Errorf("second head admitted beside Terminating rc-term-head, with warnings %q, want none", w)
	}

	// The Terminating head still holds the deterministic name a new head gets.
	_, err = s.create(ns, lookupPod("rc-term-head-", "rc-term", "head"), false)
	if !apierrors.IsAlreadyExists(err) || !strings.Contains(err.Error(), "object is being deleted") {
		t.Errorf("a head rc-term-head-* (generateName) while rc-term-head is Terminating: want 409 AlreadyExists, object is being deleted, got %v", err)
	}
	if err := lookupUnhold(c, ns, "rc-term-head"); err != nil {
		t.Fatalf("removing the finalizer of rc-term-head: %v", err)
	}
	framework.Eventually(t, 10*time.Second, 200*time.Millisecond, func() (bool, string) {
		p, err := lookupGet(t, ns, "rc-term-head")
		if apierrors.IsNotFound(err) {
			return true, ""
		}
		if err != nil {
			return false, err.Error()
		}
		return false, "rc-term-head still stored once its finalizer is removed: " + lookupState(p)
	})
	t.Logf("rc-term-head Terminating: the second head admitted; rc-term-head-* refused: %v", err)
}

// 11b, 11c
func (s *lookupSuite) testFinished(t *testing.T, cluster string, phase corev1.PodPhase) {
	ns := s.okNamespace(t, "e2e-lookup-"+strings.TrimPrefix(cluster, "rc-"))
	name := cluster + "-head"
	s.mustCreate(t, ns, lookupPod(name, cluster, "head"))
	s.mustRefuse(t, ns, lookupExempt(name+"-v2", cluster), name)
	lookupSetPhase(t, ns, name, phase)
	p, err := lookupGet(t, ns, name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if got, want := lookupState(p), name+"="+string(phase); got != want {
		t.Fatalf("head after the status patch: %s, want %s", got, want)
	}
	w := s.mustAdmit(t, ns, lookupExempt(name+"-v2", cluster))
	t.Logf("%s %s: the second head admitted (warnings %q)", name, phase, w)
}

// 11d
func (s *lookupSuite) testMixed(t *testing.T) {
	c := framework.Attach(t)
	ns := s.okNamespace(t, "e2e-lookup-mixed")
	const cluster = "rc-mixed"
	s.mustCreate(t, ns, lookupPod("rc-mixed-head", cluster, "head"))
	lookupSetPhase(t, ns, "rc-mixed-head", corev1.PodFailed)
	old := lookupExempt("rc-mixed-head-old", cluster)
	old.Finalizers = []string{lookupHold}
	s.mustCreate(t, ns, old)
	lookupDelete(t, ns, "rc-mixed-head-old")
	s.mustCreate(t, ns, lookupExempt("rc-mixed-head-run", cluster))
	lookupSetPhase(t, ns, "rc-mixed-head-run", corev1.PodRunning)

	var states []string
	for _, p := range rayPods(t, ns, cluster, "head") {
		states = append(states, lookupState(&p))
	}
	want := "rc-mixed-head=Failed rc-mixed-head-old=Pending/Terminating rc-mixed-head-run=Running"
	if got := strings.Join(states, " "); got != want {
		t.Fatalf("heads of %s: %s, want %s", cluster, got, want)
	}
	msg := s.mustRefuse(t, ns, lookupExempt("rc-mixed-head-new", cluster), "rc-mixed-head-run")
	if !strings.Contains(msg, "(phase Running)") {
		t.Errorf("the refusal does not give the live head's phase (phase Running): %s", msg)
	}
	if strings.Contains(msg, `rc-mixed-head"`) || strings.Contains(msg, "rc-mixed-head-old") {
		t.Errorf("the refusal names a head that is not live: %s", msg)
	}
	if err := lookupUnhold(c, ns, "rc-mixed-head-old"); err != nil {
		t.Errorf("removing the finalizer of rc-mixed-head-old: %v", err)
	}
	t.Logf("heads %s; a fourth refused: %s", strings.Join(states, " "), msg)
}

// 11e
func (s *lookupSuite) testSelector(t *testing.T) {
	c := framework.Attach(t)
	ns := s.okNamespace(t, "e2e-lookup-sel")
	other := s.okNamespace(t, "e2e-lookup-sel-other")
	s.mu.Lock()
	s.selectNS = ns
	s.mu.Unlock()
	s.mustCreate(t, ns, lookupPod("rc-sel-workers-worker-1", "rc-sel", "worker"))
	s.mustCreate(t, ns, lookupPod("rc-sel-2-head", "rc-sel-2", "head"))
	s.mustCreate(t, other, lookupPod("rc-sel-head", "rc-sel", "head"))

	var stored []string
	for _, n := range []string{ns, other} {
		list, err := c.Kube.CoreV1().Pods(n).List(context.Background(), metav1.ListOptions{
			LabelSelector: "ray.io/cluster in (rc-sel, rc-sel-2)"})
		if err != nil {
			t.Fatalf("listing the Pods of %s: %v", n, err)
		}
		for _, p := range list.Items {
			stored = append(stored, p.Namespace+"/"+p.Name)
		}
	}
	sort.Strings(stored)
	want := []string{other + "/rc-sel-head", ns + "/rc-sel-2-head", ns + "/rc-sel-workers-worker-1"}
	sort.Strings(want)
	if strings.Join(stored, " ") != strings.Join(want, " ") {
		t.Fatalf("stored beside rc-sel's first head: %v, want %v", stored, want)
	}
	if w := s.mustCreate(t, ns, lookupPod("rc-sel-head", "rc-sel", "head")); len(w) > 0 {
		t.Errorf("rc-sel's first head in %s created with warnings %q, want none", ns, w)
	}
	s.mustRefuse(t, ns, lookupExempt("rc-sel-head-v2", "rc-sel"), "rc-sel-head")
}

// lookupListsBy are the lists of Pods by USER in namespaces NS among EVENTS.
func lookupListsBy(events []framework.AuditEvent, user string, ns ...string) []framework.AuditEvent {
	var out []framework.AuditEvent
	for _, e := range events {
		if e.User.Username != user || e.Verb != "list" || e.ObjectRef.Resource != "pods" {
			continue
		}
		for _, n := range ns {
			if e.ObjectRef.Namespace == n {
				out = append(out, e)
				break
			}
		}
	}
	return out
}

var lookupURI = regexp.MustCompile(`^/api/v1/namespaces/([a-z0-9-]+)/pods\?labelSelector=ray\.io%2Fcluster%3D[a-z0-9.-]+%2Cray\.io%2Fnode-type%3Dhead$`)

// 11f
func (s *lookupSuite) testAudit(t *testing.T) {
	c := framework.Attach(t)
	s.mu.Lock()
	namespaces, selNS := append([]string(nil), s.okNS...), s.selectNS
	s.mu.Unlock()
	if selNS == "" {
		t.Fatalf("audit-log reads the lookups of terminating-head to selector-and-namespace: run them too")
	}
	// Every replica that could have served them: this test's, and the shipped one.
	logged := func() int {
		n := 0
		for _, ns := range namespaces {
			n += framework.CountLines(s.r.Process.Log, "head_lookup=yes", "namespace="+ns+" ")
			n += framework.CountLines(c.WebhookLog, "head_lookup=yes", "namespace="+ns+" ")
		}
		return n
	}
	var lists []framework.AuditEvent
	framework.Eventually(t, 10*time.Second, 250*time.Millisecond, func() (bool, string) {
		lists = lookupListsBy(framework.AuditEvents(t), lookupSAUser, namespaces...)
		n := logged()
		return n > 0 && len(lists) == n, fmt.Sprintf("%d lists of Pods by %s in %v, %d lookups logged head_lookup=yes",
			len(lists), lookupSAUser, namespaces, n)
	})
	const reason = `RBAC: allowed by ClusterRoleBinding "ray-webhook" of ClusterRole "ray-webhook"`
	selURI := "/api/v1/namespaces/" + selNS + "/pods?labelSelector=" +
		url.QueryEscape("ray.io/cluster=rc-sel,ray.io/node-type=head")
	sawSel := false
	for _, e := range lists {
		m := lookupURI.FindStringSubmatch(e.RequestURI)
		if m == nil || m[1] != e.ObjectRef.Namespace || e.ResponseStatus.Code != 200 || e.UserAgent != "ray-webhook" ||
			!strings.HasPrefix(e.Annotations["authorization.k8s.io/reason"], reason) {
			t.Errorf("a lookup of another shape: %s in %s by %s (%s): %d, %q", e.RequestURI, e.ObjectRef.Namespace,
				e.User.Username, e.UserAgent, e.ResponseStatus.Code, e.Annotations["authorization.k8s.io/reason"])
		}
		sawSel = sawSel || e.RequestURI == selURI
	}
	if !sawSel {
		t.Errorf("no list %s in the audit log", selURI)
	}
	t.Logf("%d lookups, as many as logged; e.g. list %s by %s: 200", len(lists), selURI, lookupSAUser)
}

// liveHead stores head CLUSTER-head in a new namespace and returns the namespace.
func (s *lookupSuite) liveHead(t *testing.T, prefix, cluster string) string {
	t.Helper()
	ns := framework.NewNamespace(t, prefix)
	s.mustCreate(t, ns, lookupPod(cluster+"-head", cluster, "head"))
	return ns
}

// lookupFailure is the error= of replica log LOG's last "head lookup failed"
// line for namespace NS, once it has more than BEFORE of them.
func lookupFailure(t *testing.T, log, ns string, before int) string {
	t.Helper()
	framework.WaitLines(t, log, before+1, "head lookup failed", "namespace="+ns+" ")
	lines := framework.Lines(log, "head lookup failed", "namespace="+ns+" ")
	last := lines[len(lines)-1]
	if i := strings.Index(last, "error="); i >= 0 {
		return last[i:]
	}
	return last
}

// 11g to 11j: the volume gets TOKEN and CA (nil: the API server's); the
// second head of a cluster whose head is stored is admitted (the shipped
// flags fail open) with the WARNING, the replica logs the REASON, the audit
// log has a refused list by USER in the namespace ("": no event at all).
func (s *lookupSuite) testRefusedLookup(t *testing.T, token, ca []byte, warning, reason, user string) {
	const cluster = "rc-live"
	ns := s.liveHead(t, "e2e-lookup-refused", cluster)
	framework.SwapVolume(t, s.sa, framework.ServiceAccountVolume(t, string(token), ca))
	e0 := len(framework.AuditEvents(t))
	failures := framework.CountLines(s.r.Process.Log, "head lookup failed", "namespace="+ns+" ")
	w, err := s.create(ns, lookupExempt(cluster+"-head-v2", cluster), true)
	if err != nil {
		t.Fatalf("second head with the lookup failing: want it admitted (--head-lookup-failure=allow), got %v", err)
	}
	prefix := `could not check RayCluster "` + cluster + `" for another head Pod: ` + warning
	found := false
	for _, x := range w {
		found = found || strings.HasPrefix(x, prefix)
	}
	if !found {
		t.Errorf("warnings %q: none starts with %q", w, prefix)
	}
	logged := lookupFailure(t, s.r.Process.Log, ns, failures)
	if !strings.Contains(logged, reason) {
		t.Errorf("ray-webhook's log: %s; want it to contain %s", logged, reason)
	}
	if user == "" {
		time.Sleep(time.Second) // an event would be written by now
		if events := framework.AuditEvents(t); len(events) != e0 {
			t.Errorf("audit events %d -> %d, want no request to have reached kube-apiserver: %+v", e0, len(events), events[e0:])
		}
	} else {
		framework.Eventually(t, 10*time.Second, 250*time.Millisecond, func() (bool, string) {
			events := framework.AuditEvents(t)
			for _, e := range lookupListsBy(events[min(e0, len(events)):], user, ns) {
				if e.ResponseStatus.Code == 403 {
					return true, ""
				}
			}
			return false, fmt.Sprintf("no list of Pods in %s by %s answered 403 among %d new audit events", ns, user, len(events)-e0)
		})
	}
	t.Logf("Warning: %s", strings.Join(w, " | Warning: "))
	t.Logf("ray-webhook: %s", logged)
}

// 11k
func (s *lookupSuite) testSwappedBack(t *testing.T) {
	c := framework.Attach(t)
	const cluster = "rc-live"
	ns := s.liveHead(t, "e2e-lookup-back", cluster)
	second := func() *corev1.Pod { return lookupExempt(cluster+"-head-v2", cluster) }
	// From a volume the lookup fails with, as 11j leaves it to the kubelet.
	framework.SwapVolume(t, s.sa, framework.ServiceAccountVolume(t, s.deployToken, lookupWebhookCA(t)))
	if w, err := s.create(ns, second(), true); err != nil || !strings.Contains(strings.Join(w, " "), "could not check") {
		t.Fatalf("with the webhook's CA in the volume: want the second head admitted with a lookup failure's warning, got %v, warnings %q", err, w)
	}
	framework.SwapVolume(t, s.sa, framework.ServiceAccountVolume(t, s.deployToken, nil))
	s.mustRefuse(t, ns, second(), cluster+"-head")

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			_, errs[i] = c.Kube.CoreV1().Pods(ns).Create(ctx, second(), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		}(i)
	}
	wg.Wait()
	refused := 0
	for i, err := range errs {
		if why := lookupRefusal(err, cluster+"-head"); why == "" {
			refused++
		} else {
			t.Errorf("second head %d of 4 sent at once: %s", i+1, why)
		}
	}
	if s.r.Process.Exited() || s.r.Process.Pid() != s.pid {
		t.Errorf("the replica of 11g to 11k did not run throughout (pid %d, now %d, exited %v)", s.pid, s.r.Process.Pid(), s.r.Process.Exited())
	}
	t.Logf("the second head refused again, and %d of 4 sent at once; replica pid %d throughout", refused, s.pid)
}

// 11l
func (s *lookupSuite) testDenyMode(t *testing.T) {
	const cluster = "rc-live"
	ns := s.liveHead(t, "e2e-lookup-deny", cluster)
	sa := framework.NewVolume(t, framework.ServiceAccountVolume(t, "e2e-not-a-token-"+lookupRandom(), nil))
	framework.StartReplica(t, framework.ReplicaOptions{Name: "ray-webhook-deny", SADir: sa,
		Args: []string{"--head-lookup-failure=deny"}})
	second := lookupExempt(cluster+"-head-v2", cluster)

	deny := regexp.QuoteMeta(lookupDenied + `: could not check RayCluster "`)
	want401 := regexp.MustCompile(deny + regexp.QuoteMeta(cluster) + `" .*answered 401: Unauthorized\. Denied because the webhook runs with --head-lookup-failure=deny`)
	_, err := s.create(ns, second, true)
	if !apierrors.IsServiceUnavailable(err) || !want401.MatchString(err.Error()) {
		t.Errorf("second head, rejected token: want 503 matching %s, got %v (code %d)", want401, err, lookupCode(err))
	}

	framework.SwapVolume(t, sa, framework.ServiceAccountVolume(t, s.noRBACToken, nil))
	want403 := regexp.MustCompile(deny + `rc-deny" .*answered 403: pods is forbidden`)
	_, err = s.create(ns, lookupPod("rc-deny-head", "rc-deny", "head"), true)
	if !apierrors.IsServiceUnavailable(err) || !want403.MatchString(err.Error()) {
		t.Errorf("first head of rc-deny, token without RBAC: want 503 matching %s, got %v (code %d)", want403, err, lookupCode(err))
	}

	framework.SwapVolume(t, sa, framework.ServiceAccountVolume(t, s.deployToken, nil))
	w, err := s.create(ns, lookupPod("rc-deny-head", "rc-deny", "head"), true)
	if err != nil || len(w) > 0 {
		t.Errorf("first head of rc-deny, deploy/'s token: want it admitted with no warning, got %v, warnings %q", err, w)
	}
	_, err = s.create(ns, second, true)
	if why := lookupRefusal(err, cluster+"-head"); why != "" {
		t.Errorf("second head, deploy/'s token: want the lookup's 409, got %s", why)
	}
}

// lookupWarnModeDeployment is the Deployment of deploy/examples/warn-mode as kustomize renders it.
func lookupWarnModeDeployment(t *testing.T) *appsv1.Deployment {
	t.Helper()
	c := framework.Attach(t)
	r := framework.Kubectl(t, "", "kustomize", c.DeploySrc+"/deploy/examples/warn-mode")
	if r.Err != nil {
		t.Fatalf("kubectl kustomize deploy/examples/warn-mode: %v\n%s", r.Err, r.Stderr)
	}
	for _, doc := range strings.Split(r.Stdout, "\n---\n") {
		var d appsv1.Deployment
		if err := yaml.Unmarshal([]byte(doc), &d); err != nil || d.Kind != "Deployment" {
			continue
		}
		if len(d.Spec.Template.Spec.Containers) == 0 {
			t.Fatalf("the warn-mode Deployment %s has no container", d.Name)
		}
		return &d
	}
	t.Fatalf("kubectl kustomize deploy/examples/warn-mode rendered no Deployment")
	return nil
}

// 11m
func (s *lookupSuite) testWarnMode(t *testing.T) {
	c := framework.Attach(t)
	const cluster = "rc-warn"
	ns := s.liveHead(t, "e2e-lookup-warn", cluster)
	ctr := lookupWarnModeDeployment(t).Spec.Template.Spec.Containers[0]
	// This run's address, port and certificates instead (as StartReplica gives them).
	args := framework.DeploymentArgs(ctr.Args)
	var env []string
	for _, e := range ctr.Env {
		if e.Name == "CLUSTER_DOMAIN" {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	api, err := url.Parse(c.APIServer)
	if err != nil {
		t.Fatalf("APISERVER %q: %v", c.APIServer, err)
	}
	// 127.0.0.1 written as an IPv4-mapped IPv6 address: an IPv6 socket (the
	// serving certificate names it).
	framework.StartReplica(t, framework.ReplicaOptions{Name: "ray-webhook-warn", Args: args, Env: env,
		APIServer: "https://[::ffff:7f00:1]:" + api.Port()})

	w, err := s.create(ns, lookupPod(cluster+"-head-warn", cluster, "head"), true)
	if err != nil {
		t.Fatalf("second head %s-head-warn under warn mode: want it admitted, got %v", cluster, err)
	}
	var name, second bool
	for _, x := range w {
		name = name || strings.HasPrefix(x, "head-name (warn mode)")
		second = second || strings.HasPrefix(x, "second-head (warn mode): ") &&
			strings.Contains(x, `live head Pod "`+cluster+`-head"`)
	}
	if !name || !second {
		t.Errorf("warnings %q: want one head-name (warn mode) and one second-head (warn mode) naming live head %q", w, cluster+"-head")
	}
	t.Logf("args %s; Warning: %s", strings.Join(args, " "), strings.Join(w, " | Warning: "))
}
