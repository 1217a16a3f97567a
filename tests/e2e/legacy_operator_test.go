package e2e

// TestLegacyOperator: KubeRay v0.3.0 (bare service names, no FQ_RAY_IP of its
// own; standing in for v0.4.0, which the module proxy does not serve) builds
// its Pods through ray-webhook. Its Pods do not tolerate the KWOK node and
// stay Pending. Each check in its own namespace, one operator for all.
//
//	fqdn-on-every-container   (3) every stored worker has exactly one FQ_RAY_IP (the head Service's
//	                          FQDN) and one RAY_IP (its bare name) on the Ray container and on every
//	                          init container, and --address=<FQDN>: in the Ray container's command
//	shm-duplicate-refused     (4) the operator's shallow copy gives the second worker two /dev/shm
//	                          mounts: ray-webhook refuses it and the operator's log quotes
//	                          ray-webhook's explanation, not the API server's "must be unique"; no
//	                          stored worker has two /dev/shm mounts
//	cluster-domain-example    (3b) a replica with deploy/examples/cluster-domain's CLUSTER_DOMAIN: a
//	                          worker created after the scale-up to 3 uses that domain in FQ_RAY_IP,
//	                          --address and its init container's FQ_RAY_IP
//	sidecar-first             (22a) a sidecar listed first and the Ray container second (env
//	                          ray=true): the operator and ray-webhook both pick containers[1]; the
//	                          sidecar is exactly as the template wrote it

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"ray-webhook/tests/e2e/framework"
)

const (
	legacyClusterFixture = "testdata/legacy-raycluster.yaml"
	legacySidecarFixture = "testdata/legacy-rc-sidecar.yaml"
	legacyCluster        = "rc-legacy"
)

var legacyRayClusters = schema.GroupVersionResource{Group: "ray.io", Version: "v1alpha1", Resource: "rayclusters"}

func TestLegacyOperator(t *testing.T) {
	framework.Attach(t)
	op := framework.Operator(t, releaseLegacy)
	t.Run("fqdn-on-every-container", testLegacyEveryContainer)
	t.Run("shm-duplicate-refused", func(t *testing.T) { testLegacyShm(t, op) })
	t.Run("cluster-domain-example", testLegacyClusterDomain)
	t.Run("sidecar-first", testLegacySidecarFirst)
}

// legacyWorkers creates rc-legacy in NS and waits for at least N stored workers.
func legacyWorkers(t *testing.T, ns string, n int) []corev1.Pod {
	t.Helper()
	framework.Create(t, ns, framework.Manifest(t, legacyClusterFixture, map[string]string{"NAME": legacyCluster}))
	var workers []corev1.Pod
	framework.Eventually(t, 120*time.Second, 500*time.Millisecond, func() (bool, string) {
		workers = rayPods(t, ns, legacyCluster, "worker")
		return len(workers) >= n, fmt.Sprintf("%d of %d workers of %s/%s stored", len(workers), n, ns, legacyCluster)
	})
	return workers
}

// legacyCommand is a container's command and args as one line.
func legacyCommand(c corev1.Container) string {
	return strings.Join(append(append([]string{}, c.Command...), c.Args...), " ")
}

// legacyCheckWorker lists what is wrong with a worker's Ray container and
// init containers for head Service SVC whose FQDN is FQ.
func legacyCheckWorker(p corev1.Pod, ray corev1.Container, svc, fq string) []string {
	var why []string
	one := func(c corev1.Container, name, want string) {
		if v := envValues(c, name); len(v) != 1 || v[0] != want {
			why = append(why, fmt.Sprintf("%s/%s %s=%v, want one %s", p.Name, c.Name, name, v, want))
		}
	}
	one(ray, "FQ_RAY_IP", fq)
	one(ray, "RAY_IP", svc)
	if !strings.Contains(legacyCommand(ray), "--address="+fq+":") {
		why = append(why, fmt.Sprintf("%s/%s has no --address=%s: (%s)", p.Name, ray.Name, fq, legacyCommand(ray)))
	}
	for _, ic := range p.Spec.InitContainers {
		one(ic, "FQ_RAY_IP", fq)
		one(ic, "RAY_IP", svc)
	}
	return why
}

func testLegacyEveryContainer(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-legacy-fqdn")
	workers := legacyWorkers(t, ns, 2)
	svc := headService(legacyCluster)
	fq := fmt.Sprintf("%s.%s.svc.%s", svc, ns, c.ClusterDomain)
	inits := 0
	for _, p := range workers {
		inits += len(p.Spec.InitContainers)
		for _, why := range legacyCheckWorker(p, p.Spec.Containers[0], svc, fq) {
			t.Error(why)
		}
	}
	if inits < len(workers) {
		t.Errorf("%d init containers in %d workers: the fixture gives each one", inits, len(workers))
	}
	t.Logf("%d workers, %d init containers: FQ_RAY_IP=%s, RAY_IP=%s, --address=%s:6379", len(workers), inits, fq, svc, fq)
}

func testLegacyShm(t *testing.T, op *framework.KubeRay) {
	ns := framework.NewNamespace(t, "e2e-legacy-shm")
	workers := legacyWorkers(t, ns, 2)
	// The operator logs the API server's answer to its create, quoted in JSON.
	refusal := regexp.MustCompile(`admission webhook \\?"mutate\.pods\.ray-webhook\.io\\?" denied the request: container [^.]*\.`)
	var quote string
	framework.Eventually(t, 30*time.Second, 500*time.Millisecond, func() (bool, string) {
		// This namespace's refusal: the other subtests' clusters meet the same shallow copy.
		for _, line := range framework.Lines(op.Process.Log, "/dev/shm", "2 times", ns) {
			if m := refusal.FindString(line); m != "" {
				quote = strings.ReplaceAll(m, `\"`, `"`)
				return true, ""
			}
		}
		return false, "no refusal by mutate.pods.ray-webhook.io of a worker of " + ns + " mounting /dev/shm 2 times in " + op.Process.Log
	})
	// Not the API server's own validation, which names the field:
	// spec.containers[0].volumeMounts[1].mountPath: Invalid value: "/dev/shm": must be unique
	if n := framework.CountLines(op.Process.Log, "mountPath: Invalid value"); n != 0 {
		t.Errorf("the API server's own 'mountPath: Invalid value' reached the operator %d times", n)
	}
	for _, p := range workers {
		shm := 0
		for _, m := range p.Spec.Containers[0].VolumeMounts {
			if m.MountPath == "/dev/shm" {
				shm++
			}
		}
		if shm > 1 {
			t.Errorf("stored worker %s mounts /dev/shm %d times", p.Name, shm)
		}
	}
	t.Logf("operator log: %s", quote)
}

func testLegacyClusterDomain(t *testing.T) {
	c := framework.Attach(t)
	ctx := context.Background()
	ns := framework.NewNamespace(t, "e2e-legacy-domain")
	known := map[string]bool{}
	for _, p := range legacyWorkers(t, ns, 2) {
		known[p.Name] = true
	}
	rendered := framework.MustKubectl(t, "", "kustomize", filepath.Join(c.DeploySrc, "deploy", "examples", "cluster-domain"))
	var domain string
	for _, e := range chartDeployment(t, rendered).Spec.Template.Spec.Containers[0].Env {
		if e.Name == "CLUSTER_DOMAIN" {
			domain = e.Value
		}
	}
	if domain == "" || domain == c.ClusterDomain {
		t.Fatalf("deploy/examples/cluster-domain sets CLUSTER_DOMAIN %q, want one other than %s", domain, c.ClusterDomain)
	}
	framework.WebhookReplica(t, nil, []string{"CLUSTER_DOMAIN=" + domain})

	patch := `[{"op": "replace", "path": "/spec/workerGroupSpecs/0/replicas", "value": 3}]`
	if _, err := c.Dynamic.Resource(legacyRayClusters).Namespace(ns).Patch(ctx, legacyCluster, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatalf("scaling %s to 3: %v", legacyCluster, err)
	}
	var fresh *corev1.Pod
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, func() (bool, string) {
		for _, p := range rayPods(t, ns, legacyCluster, "worker") {
			if !known[p.Name] {
				fresh = &p
				return true, ""
			}
		}
		return false, "no third worker of " + legacyCluster
	})
	svc := headService(legacyCluster)
	fq := fmt.Sprintf("%s.%s.svc.%s", svc, ns, domain)
	ray := fresh.Spec.Containers[0]
	if v := envValues(ray, "FQ_RAY_IP"); len(v) != 1 || v[0] != fq {
		t.Errorf("new worker %s FQ_RAY_IP=%v, want %s", fresh.Name, v, fq)
	}
	if !strings.Contains(legacyCommand(ray), "--address="+fq+":") {
		t.Errorf("new worker %s has no --address=%s: (%s)", fresh.Name, fq, legacyCommand(ray))
	}
	initFQ := 0
	for _, ic := range fresh.Spec.InitContainers {
		for _, v := range envValues(ic, "FQ_RAY_IP") {
			if v == fq {
				initFQ++
			}
		}
	}
	if initFQ == 0 {
		t.Errorf("new worker %s: no init container has FQ_RAY_IP=%s", fresh.Name, fq)
	}
	t.Logf("CLUSTER_DOMAIN %s -> %s: new worker %s FQ_RAY_IP=%s", c.ClusterDomain, domain, fresh.Name, fq)
}

func testLegacySidecarFirst(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-legacy-sidecar")
	const cluster = "rc-sidecar"
	framework.Create(t, ns, framework.Manifest(t, legacySidecarFixture, map[string]string{"NAME": cluster}))
	var worker corev1.Pod
	framework.Eventually(t, 90*time.Second, 500*time.Millisecond, func() (bool, string) {
		ws := rayPods(t, ns, cluster, "worker")
		if len(ws) == 0 {
			return false, "no worker of " + cluster + " stored"
		}
		worker = ws[0]
		return true, ""
	})
	cs := worker.Spec.Containers
	if len(cs) != 2 {
		t.Fatalf("worker %s has %d containers, not 2", worker.Name, len(cs))
	}
	side, ray := cs[0], cs[1]
	if side.Name != "log-shipper" || ray.Name != "ray-worker" {
		t.Fatalf("containers are %s, %s", side.Name, ray.Name)
	}
	// The operator chose containers[1]: its own env, which ray-webhook never adds.
	if len(envValues(ray, "RAY_PORT")) != 1 || len(envValues(ray, "RAY_ADDRESS")) != 1 {
		t.Errorf("the operator did not put its env on containers[1]: %v", ray.Env)
	}
	if !strings.Contains(legacyCommand(ray), "ray start") {
		t.Errorf("no ray start on containers[1]: %s", legacyCommand(ray))
	}
	svc := headService(cluster)
	fq := fmt.Sprintf("%s.%s.svc.%s", svc, ns, c.ClusterDomain)
	for _, why := range legacyCheckWorker(worker, ray, svc, fq) {
		t.Error(why)
	}
	if !regexp.MustCompile(`--address=` + regexp.QuoteMeta(fq) + `:[0-9]+( |$)`).MatchString(legacyCommand(ray)) {
		t.Errorf("containers[1] has no --address=%s:PORT (%s)", fq, legacyCommand(ray))
	}
	// The sidecar exactly as the template wrote it.
	if want := []corev1.EnvVar{{Name: "LOG_DIR", Value: "/tmp/ray/session_latest/logs"}}; !reflect.DeepEqual(side.Env, want) {
		t.Errorf("sidecar env changed: %v", side.Env)
	}
	if !reflect.DeepEqual(side.Command, []string{"sh", "-c", "sleep 3600"}) || len(side.Args) != 0 {
		t.Errorf("sidecar command changed: %s", legacyCommand(side))
	}
	t.Logf("worker %s: containers[1] %s FQ_RAY_IP=%v RAY_IP=%v; containers[0] %s env %v", worker.Name, ray.Name,
		envValues(ray, "FQ_RAY_IP"), envValues(ray, "RAY_IP"), side.Name, side.Env)
}
