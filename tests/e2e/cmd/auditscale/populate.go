package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Placeholders in the Pod templates, replaced per RayCluster (valid names, so
// that ray-webhook reviews the templates as it would the real Pods).
const (
	clusterMark   = "zzclusterzz"
	namespaceMark = "zznamespacezz"
)

var (
	rayClusters = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}
	rayJobs     = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}
	reports     = schema.GroupVersionResource{Group: "openreports.io", Version: "v1alpha1", Resource: "reports"}
)

// entry is one RayCluster of the layout.
type entry struct {
	Namespace string `json:"namespace"`
	Cluster   string `json:"cluster"`
}

func restConfig(kubeconfig string, qps float32) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = qps, int(qps)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	return cfg, nil
}

// settledTemplate is the Pod of bench/fixtures/NAME.json (its request.object)
// for the placeholders' RayCluster and namespace, with ray-webhook's /admit
// patch applied: a Pod as KubeRay 1.x creates it.
func settledTemplate(bin, fixtures, name, domain, group string) ([]byte, error) {
	raw, err := os.ReadFile(filepath.Join(fixtures, name+".json"))
	if err != nil {
		return nil, err
	}
	var review map[string]any
	if err := json.Unmarshal(raw, &review); err != nil {
		return nil, err
	}
	req := review["request"].(map[string]any)
	pod := req["object"].(map[string]any)
	meta := pod["metadata"].(map[string]any)
	delete(meta, "creationTimestamp")
	delete(meta, "ownerReferences")
	labels := meta["labels"].(map[string]any)
	labels["ray.io/group"] = group
	spec := pod["spec"].(map[string]any)
	// The ServiceAccount token volume is the API server's to add (it would
	// otherwise name a Secret of the fixture's cluster).
	var volumes []any
	for _, v := range asList(spec["volumes"]) {
		if n, _ := v.(map[string]any)["name"].(string); !strings.HasPrefix(n, "kube-api-access-") {
			volumes = append(volumes, v)
		}
	}
	spec["volumes"] = volumes
	for _, key := range []string{"containers", "initContainers"} {
		for _, c := range asList(spec[key]) {
			var mounts []any
			for _, m := range asList(c.(map[string]any)["volumeMounts"]) {
				if n, _ := m.(map[string]any)["name"].(string); !strings.HasPrefix(n, "kube-api-access-") {
					mounts = append(mounts, m)
				}
			}
			c.(map[string]any)["volumeMounts"] = mounts
		}
	}
	delete(spec, "nodeName")
	delete(pod, "status")
	b, _ := json.Marshal(review)
	s := strings.ReplaceAll(string(b), "raycluster-kuberay", clusterMark)
	s = strings.ReplaceAll(s, ".default.svc", "."+namespaceMark+".svc")
	s = strings.ReplaceAll(s, `"namespace":"default"`, `"namespace":"`+namespaceMark+`"`)
	cmd := exec.Command(bin, "review", "--admit", "--cluster-domain", domain, "-")
	cmd.Stdin = strings.NewReader(s)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s review --admit %s: %v: %s", bin, name, err, stderr.String())
	}
	var answer struct {
		Response struct {
			Allowed bool   `json:"allowed"`
			Patch   []byte `json:"patch"`
		} `json:"response"`
	}
	if err := json.Unmarshal(out, &answer); err != nil {
		return nil, err
	}
	if !answer.Response.Allowed {
		return nil, fmt.Errorf("ray-webhook denies the %s template: %s", name, out)
	}
	var templ map[string]any
	_ = json.Unmarshal([]byte(s), &templ)
	podJSON, _ := json.Marshal(templ["request"].(map[string]any)["object"])
	if len(answer.Response.Patch) > 0 {
		p, err := jsonpatch.DecodePatch(answer.Response.Patch)
		if err != nil {
			return nil, err
		}
		if podJSON, err = p.Apply(podJSON); err != nil {
			return nil, err
		}
	}
	return podJSON, nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func rayClusterObject(name string, workers int, taint string) *unstructured.Unstructured {
	container := func(n, cpu, mem string) map[string]any {
		return map[string]any{"name": n, "image": "rayproject/ray:2.9.0",
			"resources": map[string]any{"requests": map[string]any{"cpu": cpu, "memory": mem},
				"limits": map[string]any{"cpu": cpu, "memory": mem}}}
	}
	tolerations := []any{map[string]any{"key": taint, "operator": "Exists", "effect": "NoSchedule"}}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ray.io/v1", "kind": "RayCluster",
		"metadata": map[string]any{"name": name},
		"spec": map[string]any{
			"rayVersion": "2.9.0",
			"headGroupSpec": map[string]any{"rayStartParams": map[string]any{},
				"template": map[string]any{"spec": map[string]any{"tolerations": tolerations,
					"containers": []any{container("ray-head", "1", "2G")}}}},
			"workerGroupSpecs": []any{map[string]any{"groupName": "workers", "replicas": int64(workers),
				"minReplicas": int64(0), "maxReplicas": int64(workers), "rayStartParams": map[string]any{},
				"template": map[string]any{"spec": map[string]any{"tolerations": tolerations,
					"containers": []any{container("ray-worker", "1", "1G")}}}}},
		},
	}}
}

// retry calls f up to five times, a second apart, while it fails with
// anything but AlreadyExists (a busy API server's timeouts and 5xx answers;
// client-go itself waits out 429s).
func retry(f func() error) error {
	var err error
	for i := 0; i < 5; i++ {
		if err = f(); err == nil || apierrors.IsAlreadyExists(err) || apierrors.IsInvalid(err) || apierrors.IsForbidden(err) {
			return err
		}
		time.Sleep(time.Second)
	}
	return err
}

// nodeCIDR is node I's Pod range: a /24 of 100.64.0.0/10 (16,384 of them).
func nodeCIDR(i int) string { return fmt.Sprintf("100.%d.%d.0/24", 64+i/256, i%256) }

func populate(args []string) error {
	fs := flag.NewFlagSet("populate", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "the cluster's admin kubeconfig")
	bin := fs.String("ray-webhook", "", "the server binary (review --admit settles the Pod templates)")
	fixtures := fs.String("fixtures", "bench/fixtures", "head.json and worker.json")
	layout := fs.String("layout", "", "where to write the (namespace, RayCluster) pairs, JSON")
	nodes := fs.Int("nodes", 1000, "KWOK Nodes")
	clusters := fs.Int("clusters", 10000, "RayClusters")
	workers := fs.Int("workers", 9, "worker Pods per RayCluster (one head besides)")
	namespaces := fs.Int("namespaces", 100, "namespaces the RayClusters are spread over")
	prefix := fs.String("prefix", "audit-scale-", "namespace name prefix")
	conc := fs.Int("c", 32, "concurrent clients")
	qps := fs.Float64("qps", 5000, "client-side QPS limit")
	taint := fs.String("taint", "kwok.x-k8s.io/node", "NoSchedule taint key of the Nodes")
	domain := fs.String("cluster-domain", "cluster.local", "the cluster's DNS domain")
	_ = fs.Parse(args)
	if *kubeconfig == "" || *bin == "" || *layout == "" {
		return fmt.Errorf("populate needs -kubeconfig, -ray-webhook and -layout")
	}
	if *nodes < 1 || *clusters < 1 || *namespaces < 1 || *conc < 1 || *workers < 0 {
		return fmt.Errorf("populate: -nodes, -clusters, -namespaces and -c take positive numbers")
	}
	if *namespaces > *clusters {
		*namespaces = *clusters
	}
	cfg, err := restConfig(*kubeconfig, float32(*qps))
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	jsonCfg := rest.CopyConfig(cfg)
	jsonCfg.ContentType = "application/json"
	dyn, err := dynamic.NewForConfig(jsonCfg)
	if err != nil {
		return err
	}
	headTemplate, err := settledTemplate(*bin, *fixtures, "head", *domain, "headgroup")
	if err != nil {
		return err
	}
	workerTemplate, err := settledTemplate(*bin, *fixtures, "worker", *domain, "workers")
	if err != nil {
		return err
	}
	ctx := context.Background()
	summary := map[string]any{"nodes": *nodes, "clusters": *clusters, "namespaces": *namespaces,
		"pods": *clusters * (1 + *workers)}
	var failures atomic.Int64
	var firstErr atomic.Value
	fail := func(err error) {
		if failures.Add(1) == 1 {
			firstErr.Store(err.Error())
		}
	}
	// parallel runs f(0..n-1) on -c goroutines.
	parallel := func(n int, f func(i int) error) float64 {
		start := time.Now()
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < *conc; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1)) - 1
					if i >= n {
						return
					}
					if err := f(i); err != nil && !apierrors.IsAlreadyExists(err) {
						fail(err)
					}
				}
			}()
		}
		wg.Wait()
		return time.Since(start).Seconds()
	}

	nodeName := func(i int) string { return fmt.Sprintf("audit-scale-node-%04d", i) }
	summary["nodes_seconds"] = parallel(*nodes, func(i int) error {
		node := fmt.Sprintf(`{"apiVersion":"v1","kind":"Node","metadata":{"name":%q,
"annotations":{"kwok.x-k8s.io/node":"fake","node.alpha.kubernetes.io/ttl":"0"},
"labels":{"kubernetes.io/hostname":%q,"kubernetes.io/os":"linux","kubernetes.io/arch":"amd64","type":"kwok"}},
"spec":{"podCIDR":%q,"podCIDRs":[%q],"taints":[{"key":%q,"value":"true","effect":"NoSchedule"}]}}`,
			nodeName(i), nodeName(i), nodeCIDR(i), nodeCIDR(i), *taint)
		return kube.CoreV1().RESTClient().Post().AbsPath("/api/v1/nodes").SetHeader("Content-Type", "application/json").
			Body([]byte(node)).Do(ctx).Error()
	})
	nsName := func(i int) string { return fmt.Sprintf("%s%04d", *prefix, i) }
	summary["namespaces_seconds"] = parallel(*namespaces, func(i int) error {
		body := fmt.Sprintf(`{"apiVersion":"v1","kind":"Namespace","metadata":{"name":%q,"labels":{"audit-scale":"true"}}}`, nsName(i))
		return kube.CoreV1().RESTClient().Post().AbsPath("/api/v1/namespaces").SetHeader("Content-Type", "application/json").
			Body([]byte(body)).Do(ctx).Error()
	})
	// The ServiceAccount admission plugin refuses a Pod until kube-controller-manager has made the
	// namespace's "default" ServiceAccount: wait for each, as a user's Pods wait for it.
	parallel(*namespaces, func(i int) error {
		deadline := time.Now().Add(2 * time.Minute)
		for {
			_, err := kube.CoreV1().ServiceAccounts(nsName(i)).Get(ctx, "default", metav1.GetOptions{})
			if err == nil || time.Now().After(deadline) {
				return err
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	pairs := make([]entry, *clusters)
	for i := range pairs {
		pairs[i] = entry{Namespace: nsName(i % *namespaces), Cluster: fmt.Sprintf("rc-%05d", i)}
	}
	b, _ := json.Marshal(pairs)
	if err := os.WriteFile(*layout, b, 0o644); err != nil {
		return err
	}
	// Each RayCluster, then its Pods owned by it; the Pods of one RayCluster
	// on consecutive Nodes.
	var podsMade atomic.Int64
	podStart := time.Now()
	var clusterSeconds atomic.Int64 // nanoseconds spent creating RayClusters, summed over the clients
	summary["objects_seconds"] = parallel(*clusters, func(i int) error {
		p := pairs[i]
		t0 := time.Now()
		var rc *unstructured.Unstructured
		err := retry(func() error {
			var err error
			rc, err = dyn.Resource(rayClusters).Namespace(p.Namespace).Create(ctx,
				rayClusterObject(p.Cluster, *workers, *taint), metav1.CreateOptions{})
			return err
		})
		if apierrors.IsAlreadyExists(err) {
			rc, err = dyn.Resource(rayClusters).Namespace(p.Namespace).Get(ctx, p.Cluster, metav1.GetOptions{})
		}
		clusterSeconds.Add(int64(time.Since(t0)))
		if err != nil {
			return err
		}
		owner := fmt.Sprintf(`[{"apiVersion":"ray.io/v1","kind":"RayCluster","name":%q,"uid":%q,"controller":true,"blockOwnerDeletion":true}]`,
			p.Cluster, string(rc.GetUID()))
		for k := 0; k <= *workers; k++ {
			templ, name := headTemplate, p.Cluster+"-head"
			if k > 0 {
				templ, name = workerTemplate, fmt.Sprintf("%s-workers-worker-%05d", p.Cluster, k)
			}
			s := strings.ReplaceAll(string(templ), clusterMark, p.Cluster)
			s = strings.ReplaceAll(s, namespaceMark, p.Namespace)
			var pod map[string]any
			_ = json.Unmarshal([]byte(s), &pod)
			meta := pod["metadata"].(map[string]any)
			meta["name"] = name
			delete(meta, "generateName")
			meta["namespace"] = p.Namespace
			var refs any
			_ = json.Unmarshal([]byte(owner), &refs)
			meta["ownerReferences"] = refs
			pod["spec"].(map[string]any)["nodeName"] = nodeName((i*(*workers+1) + k) % *nodes)
			body, _ := json.Marshal(pod)
			err := retry(func() error {
				return kube.CoreV1().RESTClient().Post().Namespace(p.Namespace).Resource("pods").
					SetHeader("Content-Type", "application/json").Body(body).Do(ctx).Error()
			})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("pod %s/%s: %v", p.Namespace, name, err)
			}
			podsMade.Add(1)
		}
		return nil
	})
	elapsed := time.Since(podStart).Seconds()
	summary["pods_created"] = podsMade.Load()
	summary["rayclusters_client_seconds"] = float64(clusterSeconds.Load()) / 1e9
	if elapsed > 0 && podsMade.Load() > 0 {
		summary["objects_per_second"] = float64(podsMade.Load()+int64(*clusters)) / elapsed
		summary["seconds_per_1000_pods"] = elapsed * 1000 / float64(podsMade.Load())
	}
	summary["failed"] = failures.Load()
	if e := firstErr.Load(); e != nil {
		summary["first_error"] = e
	}
	out, _ := json.Marshal(summary)
	fmt.Println(string(out))
	if failures.Load() > 0 {
		return fmt.Errorf("%d creations failed", failures.Load())
	}
	return nil
}
