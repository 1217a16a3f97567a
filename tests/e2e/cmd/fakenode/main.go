// Command fakenode stands in for what a RayService upgrade waits for beyond the
// API server and the KubeRay operator: one node with its kubelet, the endpoint
// controllers, cluster DNS, and the Ray processes of the Pods on that node. The
// operator stays real and does all of its own work; only these neighbours are
// simulated, for the Pods and Services of the namespaces given:
//
//   - scheduler and kubelet: every Pod is bound to node -node (pods/binding)
//     and reported Running and Ready with address -ip through pods/status;
//     a Pod deleted with a grace period is removed once "stopped" (DELETE with
//     gracePeriodSeconds 0, as the kubelet does). Every Pod gets the node's
//     address, as hostNetwork Pods do: one address serves all of them.
//   - endpoint controllers: Endpoints and an EndpointSlice for every Service
//     with a selector, from the Pods it selects (ready ones as ready).
//   - cluster DNS: -hosts, a hosts file naming <service>.<namespace>.svc.<domain>
//     (a headless Service: its endpoints' addresses; another: its ClusterIP),
//     for a process that has it bound over its /etc/hosts.
//   - the Ray head: its dashboard's Serve REST API on -ip:-dashboard-port
//     (PUT and GET /api/serve/applications/, what the RayService controller
//     calls, ray-operator controllers/ray/utils/dashboardclient), answering
//     only for a head Service whose Pod is ready, and per head Service name
//     (the Host the operator dialled), with the applications submitted to it
//     RUNNING; and the Serve proxy's GET /-/healthz on -ip:-serve-port
//     (utils/httpproxy_httpclient.go), healthy (shared address: it cannot
//     tell heads apart).
//
// Every action is logged, one line each, on stderr.
//
//	fakenode -server https://127.0.0.1:6443 -ca ca.crt -cert admin.crt -key admin.key \
//	  -namespace e2e-upgrade -node e2e-node -ip 10.200.0.3 -hosts hosts
//
// Only the standard library.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

type objectMeta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace"`
	UID               string            `json:"uid"`
	Labels            map[string]string `json:"labels"`
	DeletionTimestamp *string           `json:"deletionTimestamp"`
}

type containerPort struct {
	Name          string `json:"name"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol"`
}

type container struct {
	Name  string          `json:"name"`
	Image string          `json:"image"`
	Ports []containerPort `json:"ports"`
}

type condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
}

type pod struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		NodeName       string      `json:"nodeName"`
		Containers     []container `json:"containers"`
		InitContainers []container `json:"initContainers"`
	} `json:"spec"`
	Status struct {
		Phase      string      `json:"phase"`
		PodIP      string      `json:"podIP"`
		Conditions []condition `json:"conditions"`
	} `json:"status"`
}

func (p *pod) ready() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

type servicePort struct {
	Name       string          `json:"name"`
	Port       int             `json:"port"`
	TargetPort json.RawMessage `json:"targetPort"`
	Protocol   string          `json:"protocol"`
}

type service struct {
	Metadata objectMeta `json:"metadata"`
	Spec     struct {
		Selector                 map[string]string `json:"selector"`
		ClusterIP                string            `json:"clusterIP"`
		Ports                    []servicePort     `json:"ports"`
		PublishNotReadyAddresses bool              `json:"publishNotReadyAddresses"`
	} `json:"spec"`
}

type api struct {
	server string
	client *http.Client
}

// do sends one request; a body that is not nil is sent as JSON with contentType.
func (a *api) do(method, path, contentType string, body any, out any) error {
	var reader io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		reader = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, a.server+path, reader)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := a.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var status struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(data, &status)
		return fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, status.Message)
	}
	if out != nil {
		return json.Unmarshal(data, out)
	}
	return nil
}

// apply is a server-side apply of obj (JSON is YAML) at path.
func (a *api) apply(path string, obj any) error {
	return a.do(http.MethodPatch, path+"?fieldManager=fakenode&force=true", "application/apply-patch+yaml", obj, nil)
}

type node struct {
	api        *api
	namespaces []string
	name       string
	ip         string
	domain     string
	hostsFile  string

	mu        sync.Mutex
	applied   map[string]string   // path of an Endpoints or EndpointSlice -> the JSON last applied
	slices    map[string]int      // Service -> EndpointSlices written for it
	hosts     string              // hosts file content last written
	readyHost map[string]bool     // <service>.<namespace>.svc.<domain> -> a Pod behind it is ready
	apps      map[string][]string // dashboard host -> applications submitted, "name:deployment,deployment"
	reported  map[string]bool     // Pod UID -> reported Running and Ready
}

func main() {
	server := flag.String("server", "", "API server URL")
	caFile := flag.String("ca", "", "API server CA (PEM)")
	certFile := flag.String("cert", "", "client certificate (PEM)")
	keyFile := flag.String("key", "", "client key (PEM)")
	namespaces := flag.String("namespace", "", "namespaces whose Pods and Services this node serves, comma-separated")
	nodeName := flag.String("node", "e2e-node", "name of the node Pods are bound to")
	ip := flag.String("ip", "", "address of the node: every Pod's IP, where the Ray stand-ins listen")
	hostsFile := flag.String("hosts", "", "hosts file to keep (cluster DNS); empty: none")
	domain := flag.String("domain", "cluster.local", "cluster DNS domain")
	dashboardPort := flag.Int("dashboard-port", 8265, "Ray dashboard port (the head Service's \"dashboard\" port)")
	servePort := flag.Int("serve-port", 8000, "Ray Serve proxy port (the head container's \"serve\" port)")
	interval := flag.Duration("interval", 200*time.Millisecond, "how often Pods and Services are listed")
	flag.Parse()
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	log.SetPrefix("fakenode: ")
	if *server == "" || *namespaces == "" || net.ParseIP(*ip) == nil {
		log.Fatal("-server, -namespace and -ip are required")
	}

	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(*caFile)
	if err != nil || !pool.AppendCertsFromPEM(caPEM) {
		log.Fatalf("CA %s: %v", *caFile, err)
	}
	pair, err := tls.LoadX509KeyPair(*certFile, *keyFile)
	if err != nil {
		log.Fatal(err)
	}
	n := &node{
		api: &api{server: strings.TrimRight(*server, "/"), client: &http.Client{
			Timeout:   10 * time.Second,
			Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}},
		}},
		namespaces: strings.Split(*namespaces, ","),
		name:       *nodeName,
		ip:         *ip,
		domain:     *domain,
		hostsFile:  *hostsFile,
		applied:    map[string]string{},
		slices:     map[string]int{},
		readyHost:  map[string]bool{},
		apps:       map[string][]string{},
		reported:   map[string]bool{},
	}
	n.writeHosts(nil) // the file exists before anyone binds it over /etc/hosts

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	servers := []*http.Server{
		{Addr: net.JoinHostPort(*ip, strconv.Itoa(*dashboardPort)), Handler: http.HandlerFunc(n.dashboard)},
		{Addr: net.JoinHostPort(*ip, strconv.Itoa(*servePort)), Handler: http.HandlerFunc(n.serveProxy)},
	}
	for _, s := range servers {
		l, err := net.Listen("tcp", s.Addr)
		if err != nil {
			log.Fatal(err)
		}
		go s.Serve(l)
	}
	log.Printf("node %s at %s: namespaces %s; dashboard :%d, Serve proxy :%d, hosts file %q",
		n.name, n.ip, *namespaces, *dashboardPort, *servePort, n.hostsFile)

	tick := time.NewTicker(*interval)
	defer tick.Stop()
	for {
		n.sync()
		select {
		case <-ctx.Done():
			for _, s := range servers {
				s.Close()
			}
			log.Print("stopped")
			return
		case <-tick.C:
		}
	}
}

// sync lists the Pods and Services of every namespace and acts on them.
func (n *node) sync() {
	var names []string
	for _, ns := range n.namespaces {
		var pods struct{ Items []pod }
		var services struct{ Items []service }
		if err := n.api.do(http.MethodGet, "/api/v1/namespaces/"+ns+"/pods", "", nil, &pods); err != nil {
			log.Print(err)
			continue
		}
		if err := n.api.do(http.MethodGet, "/api/v1/namespaces/"+ns+"/services", "", nil, &services); err != nil {
			log.Print(err)
			continue
		}
		for i := range pods.Items {
			n.kubelet(&pods.Items[i])
		}
		for i := range services.Items {
			names = append(names, n.endpoints(&services.Items[i], pods.Items)...)
		}
	}
	n.writeHosts(names)
}

// kubelet: bind, report Running and Ready, finish a graceful deletion.
func (n *node) kubelet(p *pod) {
	m := p.Metadata
	path := "/api/v1/namespaces/" + m.Namespace + "/pods/" + m.Name
	switch {
	case m.DeletionTimestamp != nil:
		if p.Spec.NodeName != n.name {
			return
		}
		// The kubelet's final delete once the containers are gone (pkg/kubelet/status/status_manager.go).
		err := n.api.do(http.MethodDelete, path, "application/json", map[string]any{
			"apiVersion": "v1", "kind": "DeleteOptions", "gracePeriodSeconds": 0,
			"preconditions": map[string]string{"uid": m.UID},
		}, nil)
		logResult(err, "pod %s/%s: containers stopped, deleted", m.Namespace, m.Name)
	case p.Spec.NodeName == "":
		// What kube-scheduler posts (pods/binding).
		err := n.api.do(http.MethodPost, path+"/binding", "application/json", map[string]any{
			"apiVersion": "v1", "kind": "Binding", "metadata": map[string]string{"name": m.Name},
			"target": map[string]string{"apiVersion": "v1", "kind": "Node", "name": n.name},
		}, nil)
		logResult(err, "pod %s/%s: bound to %s", m.Namespace, m.Name, n.name)
	case p.Spec.NodeName == n.name && !(p.Status.Phase == "Running" && p.ready() && p.Status.PodIP == n.ip):
		if n.reported[m.UID] {
			log.Printf("pod %s/%s: status %s, ready %v again after it was reported Running and Ready",
				m.Namespace, m.Name, p.Status.Phase, p.ready())
		}
		err := n.api.do(http.MethodPatch, path+"/status", "application/merge-patch+json", map[string]any{"status": n.running(p)}, nil)
		if err == nil {
			n.reported[m.UID] = true
		}
		logResult(err, "pod %s/%s: Running and Ready at %s", m.Namespace, m.Name, n.ip)
	}
}

// running is the status a kubelet reports once every init container has
// completed and every container runs and passes its readiness probe.
func (n *node) running(p *pod) map[string]any {
	now := time.Now().UTC().Format(time.RFC3339)
	var conditions []map[string]string
	for _, t := range []string{"PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled"} {
		conditions = append(conditions, map[string]string{"type": t, "status": "True", "lastTransitionTime": now})
	}
	var inits, containers []map[string]any
	for _, c := range p.Spec.InitContainers {
		inits = append(inits, map[string]any{"name": c.Name, "image": c.Image, "imageID": "", "ready": true, "restartCount": 0,
			"started": false, "state": map[string]any{"terminated": map[string]any{
				"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now}}})
	}
	for _, c := range p.Spec.Containers {
		containers = append(containers, map[string]any{"name": c.Name, "image": c.Image, "imageID": "", "ready": true,
			"restartCount": 0, "started": true, "state": map[string]any{"running": map[string]any{"startedAt": now}}})
	}
	status := map[string]any{
		"phase": "Running", "conditions": conditions,
		"hostIP": n.ip, "hostIPs": []map[string]string{{"ip": n.ip}},
		"podIP": n.ip, "podIPs": []map[string]string{{"ip": n.ip}},
		"startTime": now, "containerStatuses": containers,
	}
	if len(inits) > 0 {
		status["initContainerStatuses"] = inits
	}
	return status
}

func logResult(err error, format string, args ...any) {
	if err != nil {
		log.Printf(format+": failed: %v", append(args, err)...)
		return
	}
	log.Printf(format, args...)
}

type endpointAddress struct {
	pod   *pod
	ready bool
}

// endpoints writes what the endpoints and EndpointSlice controllers of
// kube-controller-manager would for Service s, and returns its DNS records.
func (n *node) endpoints(s *service, pods []pod) []string {
	fqdn := fmt.Sprintf("%s.%s.svc.%s", s.Metadata.Name, s.Metadata.Namespace, n.domain)
	headless := s.Spec.ClusterIP == "None"
	if len(s.Spec.Selector) == 0 {
		if headless {
			return nil
		}
		return []string{s.Spec.ClusterIP + " " + fqdn}
	}
	// Pods grouped by their resolved ports: one Endpoints subset and one slice each.
	groups := map[string][]endpointAddress{}
	ports := map[string][]map[string]any{}
	anyReady := false
	for i := range pods {
		p := &pods[i]
		if p.Metadata.DeletionTimestamp != nil || p.Status.PodIP == "" || !selects(s.Spec.Selector, p.Metadata.Labels) {
			continue
		}
		resolved, key := resolvePorts(s.Spec.Ports, p)
		ready := p.ready() || s.Spec.PublishNotReadyAddresses
		anyReady = anyReady || p.ready()
		groups[key] = append(groups[key], endpointAddress{p, ready})
		ports[key] = resolved
	}
	keys := make([]string, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	ns, name := s.Metadata.Namespace, s.Metadata.Name
	subsets := []map[string]any{}
	for _, k := range keys {
		var ready, notReady []map[string]any
		for _, e := range groups[k] {
			a := map[string]any{"ip": e.pod.Status.PodIP, "nodeName": n.name, "targetRef": ref(e.pod)}
			if e.ready {
				ready = append(ready, a)
			} else {
				notReady = append(notReady, a)
			}
		}
		subset := map[string]any{"ports": ports[k]}
		if ready != nil {
			subset["addresses"] = ready
		}
		if notReady != nil {
			subset["notReadyAddresses"] = notReady
		}
		subsets = append(subsets, subset)
	}
	n.applyOnce("/api/v1/namespaces/"+ns+"/endpoints/"+name, map[string]any{
		"apiVersion": "v1", "kind": "Endpoints", "metadata": map[string]any{"name": name, "namespace": ns},
		"subsets": subsets,
	}, fmt.Sprintf("endpoints %s/%s: %s", ns, name, countReady(groups)))

	// A slice per port group; slices no longer needed are emptied.
	written := n.slices[ns+"/"+name]
	for i := 0; i < len(keys) || i < written; i++ {
		var eps []map[string]any
		var slicePorts []map[string]any
		if i < len(keys) {
			slicePorts = ports[keys[i]]
			for _, e := range groups[keys[i]] {
				eps = append(eps, map[string]any{
					"addresses":  []string{e.pod.Status.PodIP},
					"conditions": map[string]bool{"ready": e.ready, "serving": e.ready, "terminating": false},
					"nodeName":   n.name, "targetRef": ref(e.pod),
				})
			}
		}
		slice := fmt.Sprintf("%s-fakenode-%d", name, i)
		n.applyOnce("/apis/discovery.k8s.io/v1/namespaces/"+ns+"/endpointslices/"+slice, map[string]any{
			"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
			"metadata": map[string]any{"name": slice, "namespace": ns, "labels": map[string]string{
				"kubernetes.io/service-name":             name,
				"endpointslice.kubernetes.io/managed-by": "fakenode",
			}},
			"addressType": "IPv4", "endpoints": orEmpty(eps), "ports": orEmpty(slicePorts),
		}, fmt.Sprintf("endpointslice %s/%s: %d endpoints", ns, slice, len(eps)))
	}
	if len(keys) > written {
		n.slices[ns+"/"+name] = len(keys)
	}

	n.mu.Lock()
	n.readyHost[fqdn] = anyReady
	n.mu.Unlock()
	if !headless {
		return []string{s.Spec.ClusterIP + " " + fqdn}
	}
	// A headless Service's name resolves to its endpoints' addresses.
	seen := map[string]bool{}
	var records []string
	for _, k := range keys {
		for _, e := range groups[k] {
			if e.ready && !seen[e.pod.Status.PodIP] {
				seen[e.pod.Status.PodIP] = true
				records = append(records, e.pod.Status.PodIP+" "+fqdn)
			}
		}
	}
	return records
}

func selects(selector, labels map[string]string) bool {
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func ref(p *pod) map[string]string {
	return map[string]string{"kind": "Pod", "name": p.Metadata.Name, "namespace": p.Metadata.Namespace, "uid": p.Metadata.UID}
}

func orEmpty(list []map[string]any) []map[string]any {
	if list == nil {
		return []map[string]any{}
	}
	return list
}

func countReady(groups map[string][]endpointAddress) string {
	ready, notReady := 0, 0
	for _, g := range groups {
		for _, e := range g {
			if e.ready {
				ready++
			} else {
				notReady++
			}
		}
	}
	return fmt.Sprintf("%d ready, %d not ready", ready, notReady)
}

// resolvePorts gives the Service's ports as endpoint ports for Pod p: a
// numbered targetPort as it is, a named one from the Pod's container ports
// (pkg/api/v1/pod FindPort), none: the Service port.
func resolvePorts(svcPorts []servicePort, p *pod) ([]map[string]any, string) {
	var out []map[string]any
	var key []string
	for _, sp := range svcPorts {
		port := sp.Port
		var number int
		var name string
		if json.Unmarshal(sp.TargetPort, &number) == nil && number > 0 {
			port = number
		} else if json.Unmarshal(sp.TargetPort, &name) == nil && name != "" {
			port = 0
			if n, err := strconv.Atoi(name); err == nil {
				port = n
			}
			for _, c := range p.Spec.Containers {
				for _, cp := range c.Ports {
					if cp.Name == name {
						port = cp.ContainerPort
					}
				}
			}
			if port == 0 {
				continue
			}
		}
		protocol := sp.Protocol
		if protocol == "" {
			protocol = "TCP"
		}
		out = append(out, map[string]any{"name": sp.Name, "port": port, "protocol": protocol})
		key = append(key, fmt.Sprintf("%s=%d/%s", sp.Name, port, protocol))
	}
	return orEmpty(out), strings.Join(key, ",")
}

// applyOnce applies obj at path unless the same object was applied there last.
func (n *node) applyOnce(path string, obj any, what string) {
	b, _ := json.Marshal(obj)
	if n.applied[path] == string(b) {
		return
	}
	err := n.api.apply(path, obj)
	if err == nil {
		n.applied[path] = string(b)
	}
	logResult(err, "%s", what)
}

// writeHosts rewrites the hosts file in place when its records changed: the
// same inode, since a bind mount holds on to it (a rename would replace it).
func (n *node) writeHosts(records []string) {
	if n.hostsFile == "" {
		return
	}
	sort.Strings(records)
	content := "# cluster DNS of fakenode: " + strings.Join(n.namespaces, ",") + "\n127.0.0.1 localhost\n::1 localhost\n"
	for _, r := range records {
		content += r + "\n"
	}
	if content == n.hosts {
		return
	}
	if err := os.WriteFile(n.hostsFile, []byte(content), 0o644); err != nil {
		log.Printf("hosts file: %v", err)
		return
	}
	n.hosts = content
	log.Printf("hosts file: %d records", len(records))
}

// The Serve REST API of a Ray head's dashboard (Ray's dashboard/modules/serve):
// PUT /api/serve/applications/ deploys a config, GET lists its applications.
func (n *node) dashboard(w http.ResponseWriter, r *http.Request) {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	n.mu.Lock()
	ready := n.readyHost[host]
	n.mu.Unlock()
	code := http.StatusOK
	defer func() { log.Printf("dashboard %s %s %s: %d", r.Method, r.Host, r.URL.RequestURI(), code) }()
	if !ready {
		code = http.StatusServiceUnavailable
		http.Error(w, "no ready Ray head behind "+host, code)
		return
	}
	if r.URL.Path != "/api/serve/applications/" {
		code = http.StatusNotFound
		http.NotFound(w, r)
		return
	}
	switch r.Method {
	case http.MethodPut:
		var config struct {
			Applications []struct {
				Name        string `json:"name"`
				RoutePrefix string `json:"route_prefix"`
				Deployments []struct {
					Name string `json:"name"`
				} `json:"deployments"`
			} `json:"applications"`
		}
		if err := json.NewDecoder(r.Body).Decode(&config); err != nil {
			code = http.StatusBadRequest
			http.Error(w, err.Error(), code)
			return
		}
		var apps []string
		for _, a := range config.Applications {
			var deployments []string
			for _, d := range a.Deployments {
				deployments = append(deployments, d.Name)
			}
			apps = append(apps, a.Name+":"+strings.Join(deployments, ","))
		}
		n.mu.Lock()
		n.apps[host] = apps
		n.mu.Unlock()
		log.Printf("dashboard %s: applications deployed: %s", host, strings.Join(apps, " "))
		w.WriteHeader(code)
	case http.MethodGet:
		n.mu.Lock()
		apps := n.apps[host]
		n.mu.Unlock()
		details := map[string]any{}
		for _, a := range apps {
			name, list, _ := strings.Cut(a, ":")
			deployments := map[string]any{}
			for _, d := range strings.Split(list, ",") {
				if d != "" {
					deployments[d] = map[string]string{"name": d, "status": "HEALTHY", "message": ""}
				}
			}
			details[name] = map[string]any{"name": name, "status": "RUNNING", "message": "", "deployments": deployments}
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"deploy_mode": "MULTI_APP", "applications": details})
	default:
		code = http.StatusMethodNotAllowed
		http.Error(w, "method not allowed", code)
	}
}

// The Serve proxy's health check (Ray's serve/_private/proxy.py, /-/healthz).
func (n *node) serveProxy(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/-/healthz" {
		http.NotFound(w, r)
		return
	}
	io.WriteString(w, "success")
}
