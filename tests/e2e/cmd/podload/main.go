// Command podload creates Ray worker Pods through kube-apiserver as fast as
// -c concurrent clients can, for -duration (and at most -max Pods), and prints
// one JSON summary line: how many were created, the creations per second, the
// p50 and p99 of a creation's round trip, and every failure with its HTTP
// status and message. With -rate R the clients together start R creations a
// second (an offered rate, as bench/apiserver.sh needs), else as many as they
// can. scripts/e2e.sh runs it while a ray-webhook replica
// is restarted or its certificate rotated: with failurePolicy Fail a failed
// webhook call shows up here as a failed creation.
//
// Its Pod is a worker as KubeRay before 0.5 built it (a bare head name in
// --address, no FQ_RAY_IP: ray-webhook patches it); with -settled, one as
// KubeRay 1.x builds it (the FQDN already in its env and --address: nothing to
// change). -print-pod prints the Pod it would create and exits. -scale NAME
// -to N scales the first worker group of RayCluster NAME to N replicas and
// prints how long the operator took to store N worker Pods, as a watch saw
// them.
//
//	podload -server https://127.0.0.1:6443 -ca ca.crt -cert admin.crt -key admin.key \
//	  -namespace e2e-load -cluster rc-load -duration 20s -c 4
//
// Only the standard library: a POST of a Pod to /api/v1/namespaces/NS/pods.
package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"sort"
	"sync"
	"time"
)

type failure struct {
	At     string `json:"at"`
	Status int    `json:"status"`
	Error  string `json:"error"`
}

func main() {
	server := flag.String("server", "", "API server URL")
	caFile := flag.String("ca", "", "API server CA (PEM)")
	certFile := flag.String("cert", "", "client certificate (PEM)")
	keyFile := flag.String("key", "", "client key (PEM)")
	namespace := flag.String("namespace", "default", "namespace of the Pods")
	cluster := flag.String("cluster", "rc-load", "ray.io/cluster label of the Pods")
	duration := flag.Duration("duration", 20*time.Second, "how long to create Pods")
	concurrency := flag.Int("c", 4, "concurrent clients")
	max := flag.Int("max", 5000, "stop after this many attempts")
	rate := flag.Float64("rate", 0, "creations started per second by all clients together (0: as fast as they can)")
	schedulerName := flag.String("scheduler-name", "", "spec.schedulerName of the Pods (empty: the default scheduler); a name no scheduler serves keeps them Pending, so thousands of them cost the scheduler nothing")
	settled := flag.Bool("settled", false, "create workers that carry the head's FQDN already, as KubeRay 1.x builds them")
	clusterDomain := flag.String("cluster-domain", "cluster.local", "the cluster's DNS domain, in the FQDN of -settled")
	printPod := flag.Bool("print-pod", false, "print the Pod it creates and exit")
	scale := flag.String("scale", "", "instead of creating Pods: scale this RayCluster's first worker group to -to replicas and time the operator")
	scaleTo := flag.Int("to", 0, "the replicas of -scale")
	flag.Parse()
	if *scale != "" && *scaleTo < 1 {
		log.Fatalf("podload: -scale needs -to with at least one replica, not %d", *scaleTo)
	}

	container := map[string]any{
		"name": "ray-worker", "image": "rayproject/ray:2.52.0",
		"command": []string{"/bin/bash", "-c", "--"},
		"args":    []string{"ray start --address=" + *cluster + "-head-svc:6379 --block"},
	}
	if *settled {
		head := *cluster + "-head-svc." + *namespace + ".svc." + *clusterDomain
		container["env"] = []map[string]string{
			{"name": "FQ_RAY_IP", "value": head}, {"name": "RAY_IP", "value": *cluster + "-head-svc"},
			{"name": "RAY_ADDRESS", "value": head + ":6379"},
		}
		container["args"] = []string{"ray start --address=" + head + ":6379 --block"}
	}
	pod := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{
			"generateName": *cluster + "-workers-worker-",
			"labels": map[string]string{
				"ray.io/node-type": "worker", "ray.io/cluster": *cluster, "ray.io/group": "workers",
			},
		},
		"spec": map[string]any{"containers": []map[string]any{container}},
	}
	if *schedulerName != "" {
		pod["spec"].(map[string]any)["schedulerName"] = *schedulerName
	}
	body, _ := json.Marshal(pod)
	if *printPod {
		fmt.Println(string(body))
		return
	}

	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(*caFile)
	if err != nil || !pool.AppendCertsFromPEM(caPEM) {
		log.Fatalf("podload: CA %s: %v", *caFile, err)
	}
	pair, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		log.Fatalf("podload: %v", err)
	}
	client := &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			TLSClientConfig:     &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}},
			MaxIdleConnsPerHost: *concurrency,
		},
	}
	if *scale != "" {
		watching := *client
		watching.Timeout = 0 // the watch lasts as long as the scale-up; -duration bounds it
		took, stored, err := scaleUp(&watching, *server, *namespace, *scale, *scaleTo, *duration)
		summary := map[string]any{"workers": stored, "seconds": took.Seconds()}
		if err != nil {
			summary["error"] = err.Error()
		}
		out, _ := json.Marshal(summary)
		fmt.Println(string(out))
		if err != nil {
			os.Exit(1)
		}
		return
	}
	url := fmt.Sprintf("%s/api/v1/namespaces/%s/pods", *server, *namespace)

	var mu sync.Mutex
	created, attempts := 0, 0
	var failures []failure
	var took []time.Duration
	start := time.Now()
	deadline := start.Add(*duration)
	// At an offered rate each creation waits for its start time; a client that
	// falls behind starts the next one at once, so the rate holds while the
	// clients keep up.
	var tickets chan struct{}
	if *rate > 0 {
		tickets = make(chan struct{}, *max)
		go func() {
			every := time.Duration(float64(time.Second) / *rate)
			for i := 0; i < *max && time.Now().Before(deadline); i++ {
				tickets <- struct{}{}
				time.Sleep(time.Until(start.Add(time.Duration(i+1) * every)))
			}
			close(tickets)
		}()
	}
	var wg sync.WaitGroup
	for i := 0; i < *concurrency; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(deadline) {
				mu.Lock()
				if attempts >= *max {
					mu.Unlock()
					return
				}
				attempts++
				mu.Unlock()
				if tickets != nil {
					if _, open := <-tickets; !open {
						mu.Lock()
						attempts-- // counted above, never sent
						mu.Unlock()
						return
					}
				}
				sent := time.Now()
				resp, err := client.Post(url, "application/json", bytes.NewReader(body))
				var f *failure
				if err != nil {
					f = &failure{Error: err.Error()}
				} else {
					msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
					resp.Body.Close()
					if resp.StatusCode != http.StatusCreated {
						var status struct {
							Message string `json:"message"`
						}
						_ = json.Unmarshal(msg, &status)
						f = &failure{Status: resp.StatusCode, Error: status.Message}
					}
				}
				mu.Lock()
				if f == nil {
					created++
					took = append(took, time.Since(sent))
				} else {
					f.At = time.Since(start).Round(time.Millisecond).String()
					failures = append(failures, *f)
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	quantile := func(q float64) float64 {
		if len(took) == 0 {
			return 0
		}
		return float64(took[int(q*float64(len(took)-1))].Microseconds()) / 1000
	}
	out, _ := json.Marshal(map[string]any{
		"attempts": attempts, "created": created, "failed": len(failures),
		"seconds": elapsed.Round(time.Millisecond).Seconds(), "per_second": float64(created) / elapsed.Seconds(),
		"p50_ms": quantile(0.50), "p99_ms": quantile(0.99), "failures": failures,
	})
	fmt.Println(string(out))
}
