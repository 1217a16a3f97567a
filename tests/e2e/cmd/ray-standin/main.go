// Command ray-standin stands in for the Ray processes inside Ray Pods, the
// ones the KubeRay operator calls. The e2e cluster has a real scheduler,
// controllers, KWOK (Pods Running and Ready, with IPs from -pod-cidr) and
// CoreDNS, but no container runtime, so no Ray runs; this answers in its place:
//
//   - every Ray Pod (label ray.io/node-type) but those where real Ray runs
//     (label e2e.ray-webhook.io/run: ray) that is Running with a
//     status.podIP inside -pod-cidr, if it is a head, gets a listener bound
//     to exactly that address: PODIP:-dashboard-port. It is closed when the
//     Pod is gone, leaves Running, or has another IP. The range must be local
//     to this host (ip route add local CIDR dev lo).
//   - a request is answered as the Pod whose address it was sent to (the
//     connection's local address), never by Host header.
//   - the head's dashboard, only while the head Pod is Ready (else 503):
//     GET /api/version as Ray's dashboard answers it, session_name being
//     "<namespace>/<pod name>" of the head that answered, so that a test can
//     tell which head a name reached. Ray Serve is not stood in for: where a
//     RayService runs, real Ray and Serve run.
//
// It learns the Pods by listing and watching the Running ones through the API
// server (admin client certificate), in the namespaces given or all. It writes
// nothing there and dials nothing else: no binding, Pod status, endpoints or
// DNS, which come from the real parts. One log line per action, on stderr.
//
//	ray-standin -server https://127.0.0.1:6443 -ca ca.crt -cert admin.crt -key admin.key \
//	  -pod-cidr 10.200.64.0/24 [-namespace e2e-upgrade]
//
// Only the standard library.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

const nodeTypeLabel = "ray.io/node-type"

// A Pod with this label runs real Ray (tests/e2e/framework RunLabel): its
// address is its own network namespace's, and it is left alone.
const realRayLabel, realRayValue = "e2e.ray-webhook.io/run", "ray"

type pod struct {
	Metadata struct {
		Name              string            `json:"name"`
		Namespace         string            `json:"namespace"`
		UID               string            `json:"uid"`
		Labels            map[string]string `json:"labels"`
		DeletionTimestamp *string           `json:"deletionTimestamp"`
	} `json:"metadata"`
	Status struct {
		Phase      string `json:"phase"`
		PodIP      string `json:"podIP"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

func (p *pod) key() string { return p.Metadata.Namespace + "/" + p.Metadata.Name }

func (p *pod) ready() bool {
	for _, c := range p.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

// rayPod is what the stand-in serves for one Pod at one address.
type rayPod struct {
	Key   string // namespace/name
	UID   string
	Head  bool
	Ready bool
	Addr  netip.Addr
}

// servedPods maps every address to the Ray Pod served there: Pods with the
// node-type label, Running, with an IP inside prefix. Two Pods claiming one
// address: the first by key wins. notes says, per Pod key, why a Ray Pod is
// not served ("" when it is).
func servedPods(pods []pod, prefix netip.Prefix) (byAddr map[netip.Addr]rayPod, notes map[string]string) {
	sorted := append([]pod(nil), pods...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].key() < sorted[j].key() })
	byAddr = map[netip.Addr]rayPod{}
	notes = map[string]string{}
	for i := range sorted {
		p := &sorted[i]
		nodeType, ok := p.Metadata.Labels[nodeTypeLabel]
		if !ok {
			continue
		}
		k := p.key()
		addr, err := netip.ParseAddr(p.Status.PodIP)
		switch {
		case p.Metadata.Labels[realRayLabel] == realRayValue:
			notes[k] = "real Ray runs in it, not served"
		case p.Status.Phase != "Running":
			notes[k] = "phase " + orDash(p.Status.Phase) + ", not served"
		case err != nil:
			notes[k] = "Running without a Pod IP, not served"
		case !prefix.Contains(addr.Unmap()):
			notes[k] = fmt.Sprintf("Pod IP %s outside %s, not served", addr, prefix)
		default:
			addr = addr.Unmap()
			if other, taken := byAddr[addr]; taken {
				notes[k] = fmt.Sprintf("Pod IP %s already served as %s, not served", addr, other.Key)
				continue
			}
			byAddr[addr] = rayPod{Key: k, UID: p.Metadata.UID, Head: nodeType == "head", Ready: p.ready(), Addr: addr}
			notes[k] = ""
		}
	}
	return byAddr, notes
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// endpoint is one listener the stand-in wants: the dashboard of one head at one address.
type endpoint struct {
	Key string
	UID string
}

// plan gives the listeners wanted for the served Pods: the dashboard's port
// on heads.
func plan(byAddr map[netip.Addr]rayPod, dashboardPort uint16) map[netip.AddrPort]endpoint {
	want := map[netip.AddrPort]endpoint{}
	for addr, p := range byAddr {
		if p.Head {
			want[netip.AddrPortFrom(addr, dashboardPort)] = endpoint{p.Key, p.UID}
		}
	}
	return want
}

// localAddr is the address a request was sent to, from its connection.
func localAddr(r *http.Request) (netip.Addr, bool) {
	a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return netip.Addr{}, false
	}
	ap, err := netip.ParseAddrPort(a.String())
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}

type listener struct {
	endpoint
	srv *http.Server
}

type standin struct {
	prefix        netip.Prefix
	dashboardPort uint16
	rayVersion    string

	mu sync.Mutex
	// key -> last seen, of every scope: only Running Ray Pods, so that the
	// Pending ones (most, in the e2e suite) cost nothing.
	pods      map[string]pod
	departed  map[string]string // key -> why it left pods, until the next reconcile
	byAddr    map[netip.Addr]rayPod
	notes     map[string]string // key -> why not served, as last logged
	listeners map[netip.AddrPort]*listener
	failed    map[netip.AddrPort]string // listen error last logged
	closed    bool
}

func newStandin(prefix netip.Prefix, dashboardPort uint16, rayVersion string) *standin {
	return &standin{
		prefix: prefix, dashboardPort: dashboardPort, rayVersion: rayVersion,
		pods: map[string]pod{}, departed: map[string]string{}, byAddr: map[netip.Addr]rayPod{}, notes: map[string]string{},
		listeners: map[netip.AddrPort]*listener{}, failed: map[netip.AddrPort]string{},
	}
}

// candidate: a Pod that may be served, kept in s.pods.
func candidate(p *pod) bool {
	_, ray := p.Metadata.Labels[nodeTypeLabel]
	return ray && p.Status.Phase == "Running"
}

// replace sets the Pods of one scope (a namespace, "" for all) from a list.
func (s *standin) replace(scope string, items []pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	listed := map[string]pod{}
	for _, p := range items {
		if candidate(&p) {
			listed[p.key()] = p
		}
	}
	for k, p := range s.pods {
		if _, still := listed[k]; !still && (scope == "" || p.Metadata.Namespace == scope) {
			delete(s.pods, k)
			s.departed[k] = "pod gone or no longer Running (list)"
		}
	}
	for k, p := range listed {
		s.pods[k] = p
	}
	s.reconcileLocked()
}

func (s *standin) upsert(p pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := p.key()
	if candidate(&p) {
		s.pods[k] = p
	} else if _, had := s.pods[k]; had {
		delete(s.pods, k)
		s.departed[k] = "pod " + orDash(p.Status.Phase)
	} else {
		return // Pending, or done: nothing to serve, nothing served
	}
	s.reconcileLocked()
}

func (s *standin) remove(p pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := p.key()
	if _, had := s.pods[k]; !had {
		return
	}
	delete(s.pods, k)
	s.departed[k] = "pod gone or no longer Running"
	s.reconcileLocked()
}

func (s *standin) reconcile() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reconcileLocked()
}

// reconcileLocked brings the served Pods and the listeners in line with s.pods.
func (s *standin) reconcileLocked() {
	if s.closed {
		return
	}
	pods := make([]pod, 0, len(s.pods))
	for _, p := range s.pods {
		pods = append(pods, p)
	}
	byAddr, notes := servedPods(pods, s.prefix)

	// What changed for each Pod, logged once.
	for k, note := range notes {
		if old, seen := s.notes[k]; note != "" && (!seen || old != note) {
			log.Printf("pod %s: %s", k, note)
		}
	}
	served := map[string]rayPod{}
	for _, p := range byAddr {
		served[p.Key] = p
	}
	before := map[string]rayPod{}
	for _, p := range s.byAddr {
		before[p.Key] = p
	}
	for k, p := range served {
		old, was := before[k]
		switch {
		case !was || old.UID != p.UID || old.Addr != p.Addr:
			log.Printf("pod %s (%s, uid %s): Running at %s, Ready %v", k, kind(p.Head), p.UID, p.Addr, p.Ready)
		case old.Ready != p.Ready:
			log.Printf("pod %s: Ready %v", k, p.Ready)
		}
	}
	for k := range before {
		if _, still := served[k]; !still && s.departed[k] != "" {
			log.Printf("pod %s: %s", k, strings.TrimPrefix(s.departed[k], "pod "))
		}
	}
	s.notes, s.byAddr = notes, byAddr

	// Listeners: close those no longer wanted (or now of another Pod), open the missing ones.
	want := plan(byAddr, s.dashboardPort)
	for _, ap := range sortedAddrs(s.listeners) {
		l := s.listeners[ap]
		if w, ok := want[ap]; ok && w == l.endpoint {
			continue
		}
		l.srv.Close() // the listener and its connections, as a stopped process's
		delete(s.listeners, ap)
		log.Printf("closed %s (dashboard of %s): %s", ap, l.Key, s.whyClosed(l.endpoint, ap))
	}
	for ap := range s.failed {
		if _, ok := want[ap]; !ok {
			delete(s.failed, ap)
		}
	}
	for _, ap := range sortedAddrs(want) {
		if _, open := s.listeners[ap]; open {
			continue
		}
		w := want[ap]
		ln, err := net.Listen("tcp", ap.String())
		if err != nil {
			if s.failed[ap] != err.Error() {
				log.Printf("listen %s (dashboard of %s): %v (retried every second)", ap, w.Key, err)
				s.failed[ap] = err.Error()
			}
			continue
		}
		delete(s.failed, ap)
		srv := &http.Server{Handler: http.HandlerFunc(s.dashboard), ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
		s.listeners[ap] = &listener{w, srv}
		go srv.Serve(ln)
		log.Printf("listening on %s: dashboard of %s", ap, w.Key)
	}
	clear(s.departed)
}

func sortedAddrs[V any](m map[netip.AddrPort]V) []netip.AddrPort {
	addrs := make([]netip.AddrPort, 0, len(m))
	for ap := range m {
		addrs = append(addrs, ap)
	}
	sort.Slice(addrs, func(i, j int) bool { return addrs[i].Compare(addrs[j]) < 0 })
	return addrs
}

func kind(head bool) string {
	if head {
		return "head"
	}
	return "worker"
}

func (s *standin) whyClosed(e endpoint, ap netip.AddrPort) string {
	p, exists := s.pods[e.Key]
	switch {
	case !exists && s.departed[e.Key] != "":
		return s.departed[e.Key]
	case !exists:
		return "pod gone"
	case p.Metadata.UID != e.UID:
		return "pod replaced (uid " + p.Metadata.UID + ")"
	case p.Status.PodIP != ap.Addr().String():
		return "pod now at " + orDash(p.Status.PodIP)
	}
	if now, ok := s.byAddr[ap.Addr()]; ok && now.Key != e.Key {
		return "address now of " + now.Key
	}
	return s.notes[e.Key]
}

// close stops every listener.
func (s *standin) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for ap, l := range s.listeners {
		l.srv.Close()
		delete(s.listeners, ap)
	}
}

// at is the Ray Pod served at the address request r was sent to.
func (s *standin) at(r *http.Request) (rayPod, bool) {
	addr, ok := localAddr(r)
	if !ok {
		return rayPod{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.byAddr[addr]
	return p, ok
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// The head's dashboard (Ray's dashboard version module): GET /api/version.
func (s *standin) dashboard(rw http.ResponseWriter, r *http.Request) {
	w := &statusWriter{ResponseWriter: rw}
	p, ok := s.at(r)
	defer func() {
		name := p.Key
		if !ok {
			name = "-"
		}
		log.Printf("dashboard %s %s %s from %s: %d", name, r.Method, r.URL.RequestURI(), r.RemoteAddr, w.code)
	}()
	switch {
	case !ok || !p.Head:
		http.Error(w, "no Ray head here", http.StatusServiceUnavailable)
	case !p.Ready:
		http.Error(w, "Ray head "+p.Key+" is not ready", http.StatusServiceUnavailable)
	case r.URL.Path == "/api/version" && r.Method == http.MethodGet:
		writeJSON(w, map[string]string{"version": "4", "ray_version": s.rayVersion, "ray_commit": "", "session_name": p.Key})
	case r.URL.Path == "/api/version":
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	default:
		http.NotFound(w, r)
	}
}

// ---------------------------------------------------------------- the API server

type api struct {
	server string
	client *http.Client // for lists: with a timeout
	watch  *http.Client // for watches: none, the context ends them
}

func (a *api) get(ctx context.Context, client *http.Client, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.server+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		var status struct {
			Message string `json:"message"`
		}
		_ = json.Unmarshal(data, &status)
		return nil, fmt.Errorf("GET %s: %d %s", path, resp.StatusCode, status.Message)
	}
	return resp, nil
}

func podsPath(scope string) string {
	if scope == "" {
		return "/api/v1/pods"
	}
	return "/api/v1/namespaces/" + url.PathEscape(scope) + "/pods"
}

// follow keeps the Pods of one scope: a list, then a watch from its
// resourceVersion; a watch that ends or fails is followed by a new list.
func (s *standin) follow(ctx context.Context, a *api, scope string) {
	name := orAll(scope)
	// Only Running Ray Pods: the API server leaves out the Pending ones, and a
	// Pod that stops running comes as DELETED.
	selector := "labelSelector=" + url.QueryEscape(nodeTypeLabel) + "&fieldSelector=" + url.QueryEscape("status.phase=Running")
	for ctx.Err() == nil {
		rv, err := s.list(ctx, a, scope, selector)
		if err != nil {
			if ctx.Err() == nil {
				log.Printf("list pods of %s: %v (again in 1 s)", name, err)
				sleep(ctx, time.Second)
			}
			continue
		}
		err = s.watchFrom(ctx, a, scope, selector, rv)
		if ctx.Err() == nil && err != nil {
			log.Printf("watch pods of %s: %v; listing again", name, err)
			sleep(ctx, 200*time.Millisecond)
		}
	}
}

func (s *standin) list(ctx context.Context, a *api, scope, selector string) (string, error) {
	resp, err := a.get(ctx, a.client, podsPath(scope)+"?"+selector)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []pod `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		return "", err
	}
	log.Printf("listed pods of %s: %d Running Ray pods, resourceVersion %s", orAll(scope), len(list.Items), list.Metadata.ResourceVersion)
	s.replace(scope, list.Items)
	return list.Metadata.ResourceVersion, nil
}

func orAll(scope string) string {
	if scope == "" {
		return "all namespaces"
	}
	return scope
}

func (s *standin) watchFrom(ctx context.Context, a *api, scope, selector, rv string) error {
	path := fmt.Sprintf("%s?%s&watch=true&allowWatchBookmarks=true&timeoutSeconds=300&resourceVersion=%s",
		podsPath(scope), selector, url.QueryEscape(rv))
	resp, err := a.get(ctx, a.watch, path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var ev struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&ev); err != nil {
			if errors.Is(err, io.EOF) {
				return nil // the server's timeout: list again
			}
			return err
		}
		var p pod
		switch ev.Type {
		case "ADDED", "MODIFIED", "DELETED":
			if err := json.Unmarshal(ev.Object, &p); err != nil {
				return err
			}
			if ev.Type == "DELETED" {
				s.remove(p)
			} else {
				s.upsert(p)
			}
		case "BOOKMARK":
		case "ERROR": // e.g. 410 Gone: the resourceVersion is too old
			var status struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			_ = json.Unmarshal(ev.Object, &status)
			return fmt.Errorf("%d %s", status.Code, status.Message)
		}
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func main() {
	server := flag.String("server", "", "API server URL")
	caFile := flag.String("ca", "", "API server CA (PEM)")
	certFile := flag.String("cert", "", "client certificate (PEM)")
	keyFile := flag.String("key", "", "client key (PEM)")
	namespaces := flag.String("namespace", "", "namespaces whose Ray Pods are served, comma-separated; empty: all")
	podCIDR := flag.String("pod-cidr", "", "range of the Pod IPs, local to this host (e.g. 10.200.64.0/24)")
	dashboardPort := flag.Uint("dashboard-port", 8265, "Ray dashboard port (heads)")
	rayVersion := flag.String("ray-version", "2.52.0", "ray_version reported by GET /api/version")
	flag.Parse()
	log.SetFlags(log.Ltime | log.Lmicroseconds)
	log.SetPrefix("ray-standin: ")
	prefix, err := netip.ParsePrefix(*podCIDR)
	if *server == "" || err != nil {
		log.Fatalf("-server and -pod-cidr (a CIDR) are required: %v", err)
	}
	if *dashboardPort == 0 || *dashboardPort > 65535 {
		log.Fatal("-dashboard-port: a port")
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
	transport := &http.Transport{
		TLSClientConfig:       &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}},
		ResponseHeaderTimeout: 30 * time.Second,
	}
	a := &api{
		server: strings.TrimRight(*server, "/"),
		client: &http.Client{Timeout: 30 * time.Second, Transport: transport},
		watch:  &http.Client{Transport: transport},
	}

	s := newStandin(prefix.Masked(), uint16(*dashboardPort), *rayVersion)
	scopes := []string{""}
	if *namespaces != "" {
		scopes = strings.Split(*namespaces, ",")
	}
	log.Printf("serving the Ray heads of %s in %s: dashboard :%d; API server %s",
		orAll(*namespaces), prefix.Masked(), *dashboardPort, a.server)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var wg sync.WaitGroup
	for _, scope := range scopes {
		wg.Add(1)
		go func() { defer wg.Done(); s.follow(ctx, a, strings.TrimSpace(scope)) }()
	}
	tick := time.NewTicker(time.Second) // retries listeners that failed
	defer tick.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			s.reconcile()
		}
	}
	s.close()
	wg.Wait()
	log.Print("stopped")
}
