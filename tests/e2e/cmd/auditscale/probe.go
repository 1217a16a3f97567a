package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
)

// change is one probe: made at created, undone at deleted; detect and clear
// hold the time each signal took (series selectors and "report").
type change struct {
	e                entry
	name             string // the Pod or the RayJob
	resource         string // what the Report's result names: RayCluster or RayJob NAME
	created, deleted time.Time
	detect, clear    map[string]float64
}

type prober struct {
	mu       sync.Mutex
	changes  []*change
	series   []string
	base     map[string]float64
	noReport bool
}

// observe applies one /metrics sample of each series at time now. A gauge
// counts changes, not which, and several changes overlap: a change is taken
// as counted once the series reaches the changes still there made up to it,
// plus the undone ones the audit has not yet seen go (their results still in
// the Reports, which the same audit writes); and as gone once the series is
// down to the changes still there that the Reports hold, plus the undone ones
// after it that they still hold. Without Reports (-no-report) the series'
// own past readings stand in for them, which can leave a change uncounted
// while others overlap it.
func (p *prober) observe(samples []sample, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.series {
		v, ok := parseSelector(s).sum(samples)
		if !ok {
			continue
		}
		g := v - p.base[s]
		witness := "report"
		if p.noReport {
			witness = s
		}
		seen := func(q *change) bool { _, ok := q.detect[witness]; return ok }
		gone := func(q *change) bool { _, ok := q.clear[witness]; return ok }
		for _, c := range p.changes {
			if _, done := c.detect[s]; done || c.created.IsZero() || !c.deleted.IsZero() {
				continue
			}
			need := 0
			for _, q := range p.changes {
				switch {
				case q.created.IsZero():
				case q.deleted.IsZero():
					if !q.created.After(c.created) {
						need++
					}
				case !gone(q):
					need++
				}
			}
			if g >= float64(need) {
				c.detect[s] = now.Sub(c.created).Seconds()
			}
		}
		for _, c := range p.changes {
			_, detected := c.detect[s]
			if _, done := c.clear[s]; done || c.deleted.IsZero() || !detected {
				continue
			}
			still := 0
			for _, q := range p.changes {
				switch {
				case q == c || q.created.IsZero():
				case q.deleted.IsZero():
					if seen(q) {
						still++
					}
				case q.deleted.After(c.deleted) && !gone(q):
					still++
				}
			}
			if g <= float64(still) {
				c.clear[s] = now.Sub(c.deleted).Seconds()
			}
		}
	}
}

func (p *prober) has(c *change, key string, clear bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	m := c.detect
	if clear {
		m = c.clear
	}
	_, ok := m[key]
	return ok
}

func (p *prober) set(c *change, key string, clear bool, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if clear {
		c.clear[key] = d.Seconds()
	} else {
		c.detect[key] = d.Seconds()
	}
}

// inReport says whether NS's ray-webhook Report has a failed result of RULE naming NAME.
func inReport(ctx context.Context, dyn dynamic.Interface, ns, rule, name string) (bool, error) {
	r, err := dyn.Resource(reports).Namespace(ns).Get(ctx, "ray-webhook-audit", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	results, _, _ := unstructured.NestedSlice(r.Object, "results")
	for _, x := range results {
		m, _ := x.(map[string]any)
		if m["rule"] != rule || m["result"] != "fail" {
			continue
		}
		for _, res := range asList(m["resources"]) {
			if rm, _ := res.(map[string]any); rm["name"] == name {
				return true, nil
			}
		}
	}
	return false, nil
}

func probe(args []string) error {
	fs := flag.NewFlagSet("probe", flag.ExitOnError)
	kubeconfig := fs.String("kubeconfig", "", "the cluster's admin kubeconfig")
	layoutFile := fs.String("layout", "", "populate's -layout")
	url := fs.String("metrics", "", "the server's /metrics URL")
	ca := fs.String("ca", "", "the server's CA")
	serverName := fs.String("server-name", "", "TLS server name of the server")
	kind := fs.String("kind", "extra-head", "extra-head or finished-job")
	n := fs.Int("n", 20, "changes")
	spread := fs.Duration("spread", 10*time.Minute, "the changes start evenly over this long")
	stepTimeout := fs.Duration("step-timeout", 12*time.Minute, "how long to wait for each signal")
	poll := fs.Duration("poll", time.Second, "how often /metrics and the Report are read")
	taint := fs.String("taint", "kwok.x-k8s.io/node", "the Nodes' taint, tolerated by the RayJob's cluster spec")
	hold := fs.Duration("hold", 0, "after all signals have it, keep each change a random time up to this long before undoing it (a deletion at any point of the audit's cycle)")
	noReport := fs.Bool("no-report", false, "no Report to wait for (--audit-reports=off)")
	_ = fs.Parse(args)
	if *kubeconfig == "" || *layoutFile == "" || *url == "" || *ca == "" || *n < 1 {
		return fmt.Errorf("probe needs -kubeconfig, -layout, -metrics, -ca and -n of at least 1")
	}
	var rule string
	var series []string
	switch *kind {
	case "extra-head":
		rule = "extra-head"
		series = []string{"ray_webhook_rayclusters_with_extra_heads", `ray_webhook_audit_findings{rule="extra-head"}`}
	case "finished-job":
		rule = "finished-job-cluster"
		series = []string{`ray_webhook_audit_findings{rule="finished-job-cluster"}`}
	default:
		return fmt.Errorf("-kind extra-head or finished-job, not %q", *kind)
	}
	raw, err := os.ReadFile(*layoutFile)
	if err != nil {
		return err
	}
	var layout []entry
	if err := json.Unmarshal(raw, &layout); err != nil || len(layout) == 0 {
		return fmt.Errorf("layout %s: %v", *layoutFile, err)
	}
	cfg, err := restConfig(*kubeconfig, 200)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	cfg.ContentType = "application/json"
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	hc, err := serverClient(*ca, *serverName)
	if err != nil {
		return err
	}
	first, err := scrape(hc, *url)
	if err != nil {
		return err
	}
	p := &prober{series: series, base: map[string]float64{}, noReport: *noReport}
	for _, s := range series {
		v, ok := parseSelector(s).sum(first)
		if !ok {
			return fmt.Errorf("%s has no %s (is the audit on?)", *url, s)
		}
		p.base[s] = v
	}
	// Changes in RayClusters of distinct namespaces where the layout has enough.
	seen := map[string]bool{}
	var picked []entry
	for _, e := range layout {
		if len(picked) < *n && !seen[e.Namespace] {
			seen[e.Namespace] = true
			picked = append(picked, e)
		}
	}
	for i := 0; len(picked) < *n; i++ {
		picked = append(picked, layout[(i*7919)%len(layout)])
	}
	stamp := time.Now().Unix() % 100000
	for i, e := range picked {
		c := &change{e: e, detect: map[string]float64{}, clear: map[string]float64{}}
		if *kind == "extra-head" {
			c.name, c.resource = fmt.Sprintf("%s-extra-head-%d-%d", e.Cluster, stamp, i), e.Cluster
		} else {
			c.name = fmt.Sprintf("%s-done-%d-%d", e.Cluster, stamp, i)
			c.resource = c.name
		}
		p.changes = append(p.changes, c)
	}
	ctx := context.Background()
	stop := make(chan struct{})
	var pollErrs int
	go func() {
		t := time.NewTicker(*poll)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if s, err := scrape(hc, *url); err == nil {
					p.observe(s, time.Now())
				} else {
					pollErrs++
				}
			}
		}
	}()

	makeChange := func(c *change) error {
		ns := c.e.Namespace
		if *kind == "extra-head" {
			// No Ray labels at creation (no webhook sees it), then labelled.
			pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: c.name},
				Spec: corev1.PodSpec{SchedulerName: "audit-scale-no-scheduler", Containers: []corev1.Container{{
					Name: "ray-head", Image: "rayproject/ray:2.9.0", Command: []string{"/bin/bash", "-lc", "--"},
					Args: []string{"ulimit -n 65536; ray start --head --block"}}}}}
			if _, err := kube.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				return err
			}
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{
				"ray.io/node-type": "head", "ray.io/cluster": c.e.Cluster, "ray.io/group": "headgroup",
				"ray.io/is-ray-node": "yes", "app.kubernetes.io/created-by": "kuberay-operator"}}})
			_, err := kube.CoreV1().Pods(ns).Patch(ctx, c.name, types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		}
		job := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "ray.io/v1", "kind": "RayJob",
			"metadata": map[string]any{"name": c.name},
			"spec": map[string]any{"entrypoint": "python -c 'print(1)'", "shutdownAfterJobFinishes": false,
				// A spec of its own, as a RayJob that made the cluster has (the audit leaves
				// RayJobs with a clusterSelector alone: they borrow a cluster).
				"rayClusterSpec": rayClusterObject(c.e.Cluster, 1, *taint).Object["spec"]}}}
		if _, err := dyn.Resource(rayJobs).Namespace(ns).Create(ctx, job, metav1.CreateOptions{}); err != nil {
			return err
		}
		end := time.Now().Add(-2 * time.Second).UTC()
		patch, _ := json.Marshal(map[string]any{"status": map[string]any{"jobDeploymentStatus": "Complete",
			"jobStatus": "SUCCEEDED", "rayClusterName": c.e.Cluster, "jobId": c.name,
			"startTime": end.Add(-time.Minute).Format(time.RFC3339), "endTime": end.Format(time.RFC3339)}})
		_, err := dyn.Resource(rayJobs).Namespace(ns).Patch(ctx, c.name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
		return err
	}
	undo := func(c *change) error {
		zero := int64(0)
		opts := metav1.DeleteOptions{GracePeriodSeconds: &zero}
		if *kind == "extra-head" {
			return kube.CoreV1().Pods(c.e.Namespace).Delete(ctx, c.name, opts)
		}
		return dyn.Resource(rayJobs).Namespace(c.e.Namespace).Delete(ctx, c.name, opts)
	}
	// wait until every signal is in (or out), or the step times out.
	wait := func(c *change, since time.Time, clear bool) {
		deadline := since.Add(*stepTimeout)
		for time.Now().Before(deadline) {
			all := true
			for _, s := range series {
				all = all && p.has(c, s, clear)
			}
			if !*noReport && !p.has(c, "report", clear) {
				in, err := inReport(ctx, dyn, c.e.Namespace, rule, c.resource)
				if err == nil && in != clear {
					p.set(c, "report", clear, time.Since(since))
				} else {
					all = false
				}
			}
			if all {
				return
			}
			time.Sleep(*poll)
		}
	}
	var errs []string
	var emu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range p.changes {
		wg.Add(1)
		go func(i int, c *change) {
			defer wg.Done()
			time.Sleep(time.Until(start.Add(time.Duration(i) * *spread / time.Duration(*n))))
			if err := makeChange(c); err != nil {
				emu.Lock()
				errs = append(errs, fmt.Sprintf("%s/%s: %v", c.e.Namespace, c.name, err))
				emu.Unlock()
				return
			}
			p.mu.Lock()
			c.created = time.Now()
			p.mu.Unlock()
			wait(c, c.created, false)
			if *hold > 0 {
				time.Sleep(time.Duration(rand.Int64N(int64(*hold))))
			}
			err := undo(c)
			p.mu.Lock()
			c.deleted = time.Now()
			p.mu.Unlock()
			if err != nil {
				emu.Lock()
				errs = append(errs, fmt.Sprintf("deleting %s/%s: %v", c.e.Namespace, c.name, err))
				emu.Unlock()
				return
			}
			wait(c, c.deleted, true)
		}(i, c)
	}
	wg.Wait()
	close(stop)

	keys := append([]string{"report"}, series...)
	if *noReport {
		keys = series
	}
	summary := map[string]any{"kind": *kind, "n": *n, "seconds": time.Since(start).Seconds(), "poll_errors": pollErrs}
	quant := func(v []float64, q float64) float64 {
		if len(v) == 0 {
			return math.NaN()
		}
		sort.Float64s(v)
		i := int(math.Ceil(q*float64(len(v)))) - 1
		if i < 0 {
			i = 0
		}
		return v[i]
	}
	stats := map[string]any{}
	p.mu.Lock()
	for _, clear := range []bool{false, true} {
		for _, k := range keys {
			var v []float64
			missing := 0
			for _, c := range p.changes {
				m := c.detect
				if clear {
					m = c.clear
				}
				if d, ok := m[k]; ok {
					v = append(v, d)
				} else {
					missing++
				}
			}
			what := "detect"
			if clear {
				what = "clear"
			}
			st := map[string]any{"count": len(v), "missing": missing}
			if len(v) > 0 {
				st["p50"], st["p99"] = quant(v, 0.5), quant(v, 0.99)
			}
			stats[what+" "+k] = st
		}
	}
	var per []map[string]any
	for _, c := range p.changes {
		per = append(per, map[string]any{"namespace": c.e.Namespace, "name": c.name, "detect": c.detect, "clear": c.clear})
	}
	p.mu.Unlock()
	summary["stats"], summary["changes"] = stats, per
	if len(errs) > 0 {
		summary["errors"] = errs
	}
	out, _ := json.Marshal(summary)
	fmt.Println(string(out))
	if len(errs) > 0 {
		return fmt.Errorf("%d changes failed: %s", len(errs), errs[0])
	}
	return nil
}
