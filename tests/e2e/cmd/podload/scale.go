package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// scaleUp sets the first worker group of RayCluster `cluster` in `namespace` to `workers`
// replicas and returns the time from that patch until a watch has seen `workers` worker Pods
// stored: what the operator takes to create them, one after another. The watch starts from a
// list's resourceVersion before the patch, so no creation is missed; no client polls meanwhile.
func scaleUp(client *http.Client, server, namespace, cluster string, workers int, limit time.Duration) (time.Duration, int, error) {
	pods := fmt.Sprintf("%s/api/v1/namespaces/%s/pods?labelSelector=%s", server, namespace,
		url.QueryEscape("ray.io/node-type=worker,ray.io/cluster="+cluster))
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		} `json:"items"`
	}
	if err := getJSON(client, pods, &list); err != nil {
		return 0, 0, err
	}
	seen := map[string]bool{}
	for _, p := range list.Items {
		seen[p.Metadata.Name] = true
	}
	watch, err := client.Get(pods + "&watch=true&allowWatchBookmarks=false&resourceVersion=" + list.Metadata.ResourceVersion)
	if err != nil {
		return 0, 0, err
	}
	defer watch.Body.Close()
	if watch.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("watch: HTTP %d", watch.StatusCode)
	}
	added := make(chan string, 1024)
	go func() {
		defer close(added)
		decoder := json.NewDecoder(watch.Body)
		for {
			var event struct {
				Type   string `json:"type"`
				Object struct {
					Metadata struct {
						Name string `json:"name"`
					} `json:"metadata"`
				} `json:"object"`
			}
			if decoder.Decode(&event) != nil {
				return
			}
			if event.Type == "ADDED" {
				added <- event.Object.Metadata.Name
			}
		}
	}()

	patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/workerGroupSpecs/0/replicas","value":%d}]`, workers)
	request, _ := http.NewRequest(http.MethodPatch,
		fmt.Sprintf("%s/apis/ray.io/v1/namespaces/%s/rayclusters/%s", server, namespace, cluster), bytes.NewBufferString(patch))
	request.Header.Set("Content-Type", "application/json-patch+json")
	start := time.Now()
	resp, err := client.Do(request)
	if err != nil {
		return 0, 0, err
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, 0, fmt.Errorf("scaling %s: HTTP %d: %s", cluster, resp.StatusCode, msg)
	}
	timeout := time.After(limit)
	for len(seen) < workers {
		select {
		case name, open := <-added:
			if !open {
				return time.Since(start), len(seen), fmt.Errorf("the watch ended after %d workers", len(seen))
			}
			seen[name] = true
		case <-timeout:
			return time.Since(start), len(seen), fmt.Errorf("%d of %d workers after %s", len(seen), workers, limit)
		}
	}
	return time.Since(start), len(seen), nil
}

func getJSON(client *http.Client, url string, into any) error {
	resp, err := client.Get(url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: HTTP %d", url, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(into)
}
