package main

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func mkPod(ns, name, uid, nodeType, phase, ip string, ready bool) pod {
	var p pod
	p.Metadata.Namespace, p.Metadata.Name, p.Metadata.UID = ns, name, uid
	if nodeType != "" {
		p.Metadata.Labels = map[string]string{nodeTypeLabel: nodeType, "ray.io/cluster": "c"}
	}
	p.Status.Phase, p.Status.PodIP = phase, ip
	status := "False"
	if ready {
		status = "True"
	}
	p.Status.Conditions = append(p.Status.Conditions, struct {
		Type   string `json:"type"`
		Status string `json:"status"`
	}{"Ready", status})
	return p
}

func TestServedPods(t *testing.T) {
	prefix := netip.MustParsePrefix("10.200.64.0/24")
	pods := []pod{
		mkPod("ns", "head", "u1", "head", "Running", "10.200.64.2", true),
		mkPod("ns", "worker", "u2", "worker", "Running", "10.200.64.3", false),
		mkPod("ns", "pending", "u3", "worker", "Pending", "", false),
		mkPod("ns", "outside", "u4", "head", "Running", "10.200.65.2", true),
		mkPod("ns", "noip", "u5", "head", "Running", "", true),
		mkPod("ns", "plain", "u6", "", "Running", "10.200.64.9", true),
		mkPod("ns", "zdup", "u7", "worker", "Running", "10.200.64.2", true),
		mkPod("ns", "done", "u8", "head", "Succeeded", "10.200.64.8", false),
		mkPod("other", "head", "u9", "head", "Running", "::ffff:10.200.64.4", true),
		mkPod("ns", "real", "u10", "worker", "Running", "10.200.64.10", true),
	}
	pods[len(pods)-1].Metadata.Labels[realRayLabel] = realRayValue
	byAddr, notes := servedPods(pods, prefix)
	want := map[string]rayPod{
		"10.200.64.2": {Key: "ns/head", UID: "u1", Head: true, Ready: true},
		"10.200.64.3": {Key: "ns/worker", UID: "u2"},
		"10.200.64.4": {Key: "other/head", UID: "u9", Head: true, Ready: true},
	}
	if len(byAddr) != len(want) {
		t.Fatalf("served %v, want %v", byAddr, want)
	}
	for a, w := range want {
		w.Addr = netip.MustParseAddr(a)
		if got := byAddr[w.Addr]; got != w {
			t.Errorf("at %s: %+v, want %+v", a, got, w)
		}
	}
	for key, frag := range map[string]string{
		"ns/pending": "phase Pending", "ns/outside": "outside 10.200.64.0/24", "ns/noip": "without a Pod IP",
		"ns/zdup": "already served as ns/head", "ns/done": "phase Succeeded", "ns/head": "",
		"ns/real": "real Ray runs in it",
	} {
		if got, ok := notes[key]; !ok || (frag == "" && got != "") || !strings.Contains(got, frag) {
			t.Errorf("note of %s: %q, want %q", key, got, frag)
		}
	}
	if _, ok := notes["ns/plain"]; ok {
		t.Errorf("a Pod without %s is noted", nodeTypeLabel)
	}
}

func TestPlan(t *testing.T) {
	h, w := netip.MustParseAddr("10.200.64.2"), netip.MustParseAddr("10.200.64.3")
	got := plan(map[netip.Addr]rayPod{
		h: {Key: "ns/h", UID: "1", Head: true, Addr: h},
		w: {Key: "ns/w", UID: "2", Addr: w},
	}, 8265)
	want := map[netip.AddrPort]endpoint{
		netip.AddrPortFrom(h, 8265): {"ns/h", "1"},
	}
	if len(got) != len(want) {
		t.Fatalf("plan %v, want %v", got, want)
	}
	for ap, e := range want {
		if got[ap] != e {
			t.Errorf("%s: %+v, want %+v", ap, got[ap], e)
		}
	}
}

func TestLocalAddr(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "http://other-head-svc.ns.svc.cluster.local:8265/api/version", nil)
	if _, ok := localAddr(r); ok {
		t.Error("an address without a connection")
	}
	for addr, want := range map[string]string{"10.200.64.7": "10.200.64.7", "::ffff:10.200.64.7": "10.200.64.7", "fd00::7": "fd00::7"} {
		ctx := context.WithValue(r.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.ParseIP(addr), Port: 8265})
		got, ok := localAddr(r.WithContext(ctx))
		if !ok || got.String() != want {
			t.Errorf("%s: %v %v, want %s", addr, got, ok, want)
		}
	}
}

// freePort is a port free on both addresses.
func freePort(t *testing.T, addrs ...string) uint16 {
	for i := 0; i < 20; i++ {
		l, err := net.Listen("tcp", addrs[0]+":0")
		if err != nil {
			t.Skipf("cannot listen on %s: %v", addrs[0], err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		ok := true
		for _, a := range addrs[1:] {
			l, err := net.Listen("tcp", net.JoinHostPort(a, strconv.Itoa(port)))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return uint16(port)
		}
	}
	t.Fatal("no free port")
	return 0
}

// TestListeners runs the stand-in on loopback addresses (127.0.0.0/8 is
// local, as the pod range is made local by the e2e bring-up).
func TestListeners(t *testing.T) {
	hosts := []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"}
	dp := freePort(t, hosts...)
	s := newStandin(netip.MustParsePrefix("127.0.0.0/8"), dp, "2.52.0")
	defer s.close()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	call := func(method, addr string, port uint16, path, host, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://"+net.JoinHostPort(addr, strconv.Itoa(int(port)))+path, strings.NewReader(body))
		if host != "" {
			req.Host = host
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	session := func(addr string) string {
		t.Helper()
		code, body := call(http.MethodGet, addr, dp, "/api/version", "", "")
		var v struct {
			Version     string `json:"version"`
			SessionName string `json:"session_name"`
		}
		if code != 200 || json.Unmarshal([]byte(body), &v) != nil || v.Version != "4" {
			return body
		}
		return v.SessionName
	}

	s.replace("", []pod{
		mkPod("ns", "a-head", "ua", "head", "Running", "127.0.0.2", true),
		mkPod("ns", "b-head", "ub", "head", "Running", "127.0.0.3", false),
		mkPod("ns", "b-worker", "uw", "worker", "Running", "127.0.0.4", true),
	})
	if got := session("127.0.0.2"); got != "ns/a-head" {
		t.Errorf("version at a: %q", got)
	}
	if code, _ := call(http.MethodGet, "127.0.0.3", dp, "/api/version", "", ""); code != 503 {
		t.Errorf("b not Ready: %d, want 503", code)
	}
	s.upsert(mkPod("ns", "b-head", "ub", "head", "Running", "127.0.0.3", true))
	if got := session("127.0.0.3"); got != "ns/b-head" {
		t.Errorf("version at b once Ready: %q", got)
	}
	// The Host header names b; the address is a's.
	code, body := call(http.MethodGet, "127.0.0.2", dp, "/api/version", "b-head-svc.ns.svc.cluster.local:8265", "")
	if code != 200 || !strings.Contains(body, `"session_name":"ns/a-head"`) {
		t.Errorf("Host of b at a's address: %d %s", code, body)
	}
	if code, _ := call(http.MethodGet, "127.0.0.4", dp, "/api/version", "", ""); code != 0 {
		t.Errorf("a worker's dashboard port answered %d", code)
	}

	if code, _ := call(http.MethodGet, "127.0.0.2", dp, "/api/jobs/", "", ""); code != 404 {
		t.Errorf("an unknown path: %d", code)
	}

	// a gone: its address closes; a new a (same name, new uid, new IP) is served.
	s.remove(mkPod("ns", "a-head", "ua", "head", "Running", "127.0.0.2", true))
	if code, _ := call(http.MethodGet, "127.0.0.2", dp, "/api/version", "", ""); code != 0 {
		t.Errorf("a gone, its dashboard answered %d", code)
	}
	s.upsert(mkPod("ns", "a-head", "ua2", "head", "Running", "127.0.0.5", true))
	if got := session("127.0.0.5"); got != "ns/a-head" {
		t.Errorf("new a: %q", got)
	}
	// b moves to another IP, then stops running.
	s.upsert(mkPod("ns", "b-head", "ub", "head", "Running", "127.0.0.2", true))
	if code, _ := call(http.MethodGet, "127.0.0.3", dp, "/api/version", "", ""); code != 0 {
		t.Errorf("b moved, its old address answered %d", code)
	}
	if got := session("127.0.0.2"); got != "ns/b-head" {
		t.Errorf("b at its new address: %q", got)
	}
	s.upsert(mkPod("ns", "b-head", "ub", "head", "Failed", "127.0.0.2", false))
	if code, _ := call(http.MethodGet, "127.0.0.2", dp, "/api/version", "", ""); code != 0 {
		t.Errorf("b Failed, its dashboard answered %d", code)
	}
	// A Pending Ray Pod is not kept.
	s.upsert(mkPod("ns", "pending", "up", "worker", "Pending", "", false))
	s.mu.Lock()
	_, kept := s.pods["ns/pending"]
	s.mu.Unlock()
	if kept {
		t.Error("a Pending Pod is kept")
	}
	// A list of one namespace leaves the others' Pods.
	s.replace("other", nil)
	if got := session("127.0.0.5"); got != "ns/a-head" {
		t.Errorf("after a list of another namespace: %q", got)
	}
	s.replace("ns", nil)
	s.mu.Lock()
	n := len(s.listeners)
	s.mu.Unlock()
	if n != 0 {
		t.Errorf("%d listeners left with no Pods", n)
	}
}

// TestFollow: a list, a watch, a watch error (410), a new list, on a fake API server.
func TestFollow(t *testing.T) {
	podJSON := func(p pod) string { b, _ := json.Marshal(p); return string(b) }
	a1 := mkPod("ns", "a-head", "ua", "head", "Running", "192.0.2.2", false)
	a1ready := mkPod("ns", "a-head", "ua", "head", "Running", "192.0.2.2", true)
	w1 := mkPod("ns", "w", "uw", "worker", "Pending", "", false)
	c1 := mkPod("ns", "c-head", "uc", "head", "Running", "192.0.2.9", true)
	var mu sync.Mutex
	lists, watches := 0, 0
	var queries []string
	secondWatch := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		queries = append(queries, r.URL.Path+"?"+r.URL.RawQuery)
		if r.URL.Path != "/api/v1/namespaces/ns/pods" || r.URL.Query().Get("labelSelector") != nodeTypeLabel ||
			r.URL.Query().Get("fieldSelector") != "status.phase=Running" {
			http.Error(w, `{"message":"unexpected"}`, http.StatusBadRequest)
			return
		}
		if r.URL.Query().Get("watch") != "true" {
			lists++
			items := []string{podJSON(a1)}
			if lists > 1 {
				items = []string{podJSON(c1)}
			}
			io.WriteString(w, `{"kind":"PodList","metadata":{"resourceVersion":"`+strconv.Itoa(10*lists)+`"},"items":[`+strings.Join(items, ",")+`]}`)
			return
		}
		watches++
		if watches == 1 {
			if rv := r.URL.Query().Get("resourceVersion"); rv != "10" {
				t.Errorf("first watch from %q", rv)
			}
			for _, ev := range []string{
				`{"type":"ADDED","object":` + podJSON(w1) + `}`,
				`{"type":"MODIFIED","object":` + podJSON(a1ready) + `}`,
				`{"type":"BOOKMARK","object":{"kind":"Pod","metadata":{"resourceVersion":"12"}}}`,
				`{"type":"DELETED","object":` + podJSON(w1) + `}`,
				`{"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old resource version"}}`,
			} {
				io.WriteString(w, ev+"\n")
			}
			return
		}
		close(secondWatch)
		mu.Unlock()
		<-r.Context().Done()
		mu.Lock()
	}))
	defer srv.Close()

	s := newStandin(netip.MustParsePrefix("192.0.2.0/24"), 1, "2.52.0") // TEST-NET-1, not local: no listener opens
	defer s.close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		s.follow(ctx, &api{server: srv.URL, client: srv.Client(), watch: srv.Client()}, "ns")
		close(done)
	}()
	<-secondWatch
	s.mu.Lock()
	keys := []string{}
	for k := range s.pods {
		keys = append(keys, k)
	}
	c, ok := s.byAddr[netip.MustParseAddr("192.0.2.9")]
	_, aServed := s.byAddr[netip.MustParseAddr("192.0.2.2")]
	s.mu.Unlock()
	if len(keys) != 1 || keys[0] != "ns/c-head" || !ok || !c.Ready || aServed {
		t.Errorf("after the relist: pods %v, c %+v %v, a served %v", keys, c, ok, aServed)
	}
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if lists != 2 || watches != 2 {
		t.Errorf("%d lists, %d watches (%v)", lists, watches, queries)
	}
}
