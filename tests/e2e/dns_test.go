package e2e

// TestDNS: the names ray-webhook and the operators give workers for their
// head, resolved on the test host (network namespace NETNS) by glibc against
// the cluster's CoreDNS, as a worker Pod would resolve them.
//
//	v0.3.0/fqdn-resolves-to-head-service   KubeRay v0.3.0 (bare names): ray-webhook's FQ_RAY_IP
//	                                       resolves to the ClusterIP head Service, whose
//	                                       controller-written EndpointSlice names the head Pod;
//	                                       the bare RAY_IP does not resolve without a search list
//	v0.3.0/fqdn-dials-head-through-cluster-ip
//	                                       the same, dialled: GET FQ_RAY_IP:8265 from the test host
//	                                       goes to the ClusterIP, which kube-proxy sends to the head
//	                                       Pod, whose Ray (the stand-in) answers as that head
//	v0.3.0/search-list-picks-namespace     the same cluster name in A and B: with B first in the
//	                                       search list A's bare RAY_IP is B's head, its FQ_RAY_IP A's
//	custom-cluster-domain                  --cluster-domain=example.internal on a replica, a second
//	                                       CoreDNS for that zone: the FQDN resolves there only
//	v1.6.2/fqdn-reaches-own-head           KubeRay v1.6.2 (headless head Service, FQ_RAY_IP its own):
//	                                       each worker's FQ_RAY_IP is its head Pod, whose Ray
//	                                       (the stand-in) answers as that head; the bare name with
//	                                       B's search list first reaches B's head

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"ray-webhook/tests/e2e/framework"
)

const (
	legacyFixture  = "testdata/raycluster-v1alpha1.yaml"
	currentFixture = "testdata/raycluster-v1.yaml"
	dnsCluster     = "rc-dns"
	customDomain   = "example.internal"
	dashboardPort  = 8265
)

func TestDNS(t *testing.T) {
	framework.Attach(t)

	t.Run("v0.3.0", func(t *testing.T) {
		framework.Operator(t, releaseLegacy)
		t.Run("fqdn-resolves-to-head-service", testLegacyFQDN)
		t.Run("fqdn-dials-head-through-cluster-ip", testLegacyClusterIP)
		t.Run("search-list-picks-namespace", testLegacySearchList)
	})
	t.Run("custom-cluster-domain", testCustomClusterDomain)
	t.Run("v1.6.2", func(t *testing.T) {
		framework.Operator(t, releaseCurrent)
		t.Run("fqdn-reaches-own-head", testCurrentHeads)
	})
}

// legacyWorkerNames: FQ_RAY_IP and RAY_IP of the first stored worker's Ray
// container, the values ray-webhook wrote (v0.3.0 gives the bare RAY_IP only).
func legacyWorkerNames(t *testing.T, rc rayCluster) (fq, bare string) {
	t.Helper()
	w := rc.Workers[0]
	fq = oneEnv(t, &w, w.Spec.Containers[0], "FQ_RAY_IP")
	bare = oneEnv(t, &w, w.Spec.Containers[0], "RAY_IP")
	return fq, bare
}

// (a)
func testLegacyFQDN(t *testing.T) {
	c := framework.Attach(t)
	ns := framework.NewNamespace(t, "e2e-dns-legacy")
	createCluster(t, ns, legacyFixture, dnsCluster, nil)
	rc := waitRunning(t, ns, dnsCluster, 1, 3*time.Minute)
	fq, bare := legacyWorkerNames(t, rc)
	svc := rc.Service
	if want := fmt.Sprintf("%s.%s.svc.%s", svc.Name, ns, c.ClusterDomain); fq != want {
		t.Fatalf("worker %s: FQ_RAY_IP %q, want %q", rc.Workers[0].Name, fq, want)
	}
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		t.Fatalf("head Service %s/%s has ClusterIP %q; KubeRay v0.3.0 with serviceType ClusterIP gives it one", ns, svc.Name, svc.Spec.ClusterIP)
	}

	conf := onlyNameserver(c.DNSIP)
	var addrs []string
	framework.Eventually(t, 30*time.Second, time.Second, func() (bool, string) {
		var err error
		addrs, err = framework.Resolve(t, conf, fq)
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(addrs, []string{svc.Spec.ClusterIP}), fmt.Sprintf("%s resolves to %v, want [%s]", fq, addrs, svc.Spec.ClusterIP)
	})

	// The Service's endpoints as the real endpointslice controller writes them.
	var slice discoveryv1.EndpointSlice
	framework.Eventually(t, 60*time.Second, 500*time.Millisecond, func() (bool, string) {
		list, err := c.Kube.DiscoveryV1().EndpointSlices(ns).List(context.Background(), metav1.ListOptions{
			LabelSelector: discoveryv1.LabelServiceName + "=" + svc.Name + "," +
				discoveryv1.LabelManagedBy + "=endpointslice-controller.k8s.io"})
		if err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, s := range list.Items {
			for _, e := range s.Endpoints {
				seen = append(seen, strings.Join(e.Addresses, ","))
				if slices.Contains(e.Addresses, rc.Head.Status.PodIP) {
					slice = s
					return true, ""
				}
			}
		}
		return false, fmt.Sprintf("%d controller-managed EndpointSlices of Service %s/%s, endpoints %v, none %s (head %s)",
			len(list.Items), ns, svc.Name, seen, rc.Head.Status.PodIP, rc.Head.Name)
	})

	bareAddrs, bareErr := framework.Resolve(t, conf, bare)
	if bareErr == nil {
		t.Fatalf("the bare RAY_IP %q resolves to %v with no search list; it should not", bare, bareAddrs)
	}
	t.Logf("worker %s/%s: FQ_RAY_IP=%s RAY_IP=%s (written by ray-webhook; KubeRay v0.3.0 gives bare names)", ns, rc.Workers[0].Name, fq, bare)
	t.Logf("  %q -> %v = Service %s ClusterIP %s", strings.TrimSpace(conf), addrs, svc.Name, svc.Spec.ClusterIP)
	t.Logf("  EndpointSlice %s (managed-by endpointslice-controller.k8s.io) names head Pod %s at %s", slice.Name, rc.Head.Name, rc.Head.Status.PodIP)
	t.Logf("  bare %s: %v", bare, bareErr)
}

// (a), dialled
func testLegacyClusterIP(t *testing.T) {
	c := framework.Attach(t)
	if strings.HasPrefix(c.KubeProxy, "none") {
		t.Fatalf("this cluster runs no kube-proxy (KUBE_PROXY=%q), so no ClusterIP routes", c.KubeProxy)
	}
	ns := framework.NewNamespace(t, "e2e-dns-clusterip")
	createCluster(t, ns, legacyFixture, dnsCluster, nil)
	rc := waitRunning(t, ns, dnsCluster, 1, 3*time.Minute)
	fq, _ := legacyWorkerNames(t, rc)
	svc := rc.Service
	if svc.Spec.ClusterIP == "" || svc.Spec.ClusterIP == corev1.ClusterIPNone {
		t.Fatalf("head Service %s/%s has ClusterIP %q; KubeRay v0.3.0 with serviceType ClusterIP gives it one", ns, svc.Name, svc.Spec.ClusterIP)
	}
	var ports []string
	served := false
	for _, p := range svc.Spec.Ports {
		ports = append(ports, fmt.Sprintf("%s %d->%s", p.Name, p.Port, p.TargetPort.String()))
		served = served || p.Port == dashboardPort
	}
	if !served {
		t.Fatalf("head Service %s/%s has no port %d, the dashboard's (ports %v)", ns, svc.Name, dashboardPort, ports)
	}

	conf := onlyNameserver(c.DNSIP)
	url := fmt.Sprintf("http://%s:%d/api/version", fq, dashboardPort)
	v := dashboardVersion(t, conf, url)
	if want := ns + "/" + rc.Head.Name; v.SessionName != want {
		t.Fatalf("GET %s answered as %q, want the head %q", url, v.SessionName, want)
	}
	addrs, err := framework.Resolve(t, conf, fq)
	if err != nil || !slices.Equal(addrs, []string{svc.Spec.ClusterIP}) {
		t.Fatalf("%s resolves to %v (%v), want the head Service's ClusterIP [%s]", fq, addrs, err, svc.Spec.ClusterIP)
	}
	t.Logf("worker %s/%s: FQ_RAY_IP=%s -> %v = Service %s ClusterIP (kube-proxy, %s mode); GET %s: session_name %q = head Pod %s at %s",
		ns, rc.Workers[0].Name, fq, addrs, svc.Name, c.KubeProxy, url, v.SessionName, rc.Head.Name, rc.Head.Status.PodIP)
}

// (b)
func testLegacySearchList(t *testing.T) {
	c := framework.Attach(t)
	nsA := framework.NewNamespace(t, "e2e-dns-a")
	nsB := framework.NewNamespace(t, "e2e-dns-b")
	createCluster(t, nsA, legacyFixture, dnsCluster, nil)
	createCluster(t, nsB, legacyFixture, dnsCluster, nil)
	a := waitRunning(t, nsA, dnsCluster, 1, 3*time.Minute)
	b := waitRunning(t, nsB, dnsCluster, 1, 3*time.Minute)
	fq, bare := legacyWorkerNames(t, a)
	if a.Service.Spec.ClusterIP == b.Service.Spec.ClusterIP {
		t.Fatalf("the head Services of %s and %s share ClusterIP %s", nsA, nsB, a.Service.Spec.ClusterIP)
	}
	conf := searchConf(c.DNSIP, c.ClusterDomain, nsB, nsA)
	want := map[string]string{bare: b.Service.Spec.ClusterIP, fq: a.Service.Spec.ClusterIP}
	got := map[string][]string{}
	for _, name := range []string{bare, fq} {
		framework.Eventually(t, 30*time.Second, time.Second, func() (bool, string) {
			addrs, err := framework.Resolve(t, conf, name)
			if err != nil {
				return false, err.Error()
			}
			got[name] = addrs
			return slices.Equal(addrs, []string{want[name]}), fmt.Sprintf("%s resolves to %v, want [%s]", name, addrs, want[name])
		})
	}
	t.Logf("RayCluster %s in %s (head Service %s) and in %s (head Service %s); resolv.conf search %s first",
		dnsCluster, nsA, a.Service.Spec.ClusterIP, nsB, b.Service.Spec.ClusterIP, nsB)
	t.Logf("  %s's worker %s: bare RAY_IP %s -> %v = %s's head Service", nsA, a.Workers[0].Name, bare, got[bare], nsB)
	t.Logf("  %s's worker %s: FQ_RAY_IP %s -> %v = its own (%s) head Service", nsA, a.Workers[0].Name, fq, got[fq], nsA)
}

// (c)
func testCustomClusterDomain(t *testing.T) {
	c := framework.Attach(t)
	framework.StartCoreDNS(t, customDomain, c.DNSIP2)
	framework.WebhookReplica(t, []string{"--cluster-domain=" + customDomain}, nil)
	framework.Operator(t, releaseLegacy, "CLUSTER_DOMAIN="+customDomain)
	ns := framework.NewNamespace(t, "e2e-dns-domain")
	createCluster(t, ns, legacyFixture, dnsCluster, nil)
	rc := waitRunning(t, ns, dnsCluster, 1, 3*time.Minute)
	fq, _ := legacyWorkerNames(t, rc)
	if want := fmt.Sprintf("%s.%s.svc.%s", rc.Service.Name, ns, customDomain); fq != want {
		t.Fatalf("worker %s: FQ_RAY_IP %q, want %q", rc.Workers[0].Name, fq, want)
	}
	var addrs []string
	framework.Eventually(t, 30*time.Second, time.Second, func() (bool, string) {
		var err error
		addrs, err = framework.Resolve(t, onlyNameserver(c.DNSIP2), fq)
		if err != nil {
			return false, "through " + c.DNSIP2 + ": " + err.Error()
		}
		return slices.Equal(addrs, []string{rc.Service.Spec.ClusterIP}),
			fmt.Sprintf("%s resolves through %s to %v, want [%s]", fq, c.DNSIP2, addrs, rc.Service.Spec.ClusterIP)
	})
	other, err := framework.Resolve(t, onlyNameserver(c.DNSIP), fq)
	if err == nil {
		t.Fatalf("%s resolves through the cluster's CoreDNS %s (zone %s) to %v; it should not", fq, c.DNSIP, c.ClusterDomain, other)
	}
	t.Logf("ray-webhook --cluster-domain=%s, KubeRay v0.3.0 with CLUSTER_DOMAIN=%s: worker %s/%s FQ_RAY_IP=%s",
		customDomain, customDomain, ns, rc.Workers[0].Name, fq)
	t.Logf("  through %s (CoreDNS for %s): %v = Service %s ClusterIP %s", c.DNSIP2, customDomain, addrs, rc.Service.Name, rc.Service.Spec.ClusterIP)
	t.Logf("  through %s (CoreDNS for %s): %v", c.DNSIP, c.ClusterDomain, err)
}

// versionAnswer is what Ray's dashboard (here the stand-in) answers to GET /api/version.
type versionAnswer struct {
	Version     string `json:"version"`
	RayVersion  string `json:"ray_version"`
	SessionName string `json:"session_name"`
}

// dashboardVersion GETs url from the test host until it answers 200 with a
// session_name (the stand-in starts listening once the head Pod is Running).
func dashboardVersion(t *testing.T, resolvConf, url string) versionAnswer {
	t.Helper()
	var v versionAnswer
	framework.Eventually(t, 60*time.Second, time.Second, func() (bool, string) {
		resp, err := framework.HTTPGetInNetns(t, resolvConf, url)
		if err != nil {
			return false, err.Error()
		}
		if resp.Status != 200 {
			return false, fmt.Sprintf("GET %s: %d %s", url, resp.Status, strings.TrimSpace(string(resp.Body)))
		}
		v = versionAnswer{}
		if err := json.Unmarshal(resp.Body, &v); err != nil || v.SessionName == "" {
			return false, fmt.Sprintf("GET %s: %q (%v)", url, resp.Body, err)
		}
		return true, ""
	})
	return v
}

// (d)
func testCurrentHeads(t *testing.T) {
	c := framework.Attach(t)
	nsA := framework.NewNamespace(t, "e2e-dns-current-a")
	nsB := framework.NewNamespace(t, "e2e-dns-current-b")
	vars := map[string]string{"REPLICAS": "1", "MAX_REPLICAS": "2"}
	createCluster(t, nsA, currentFixture, dnsCluster, vars)
	createCluster(t, nsB, currentFixture, dnsCluster, vars)
	clusters := []rayCluster{waitRunning(t, nsA, dnsCluster, 1, 3*time.Minute), waitRunning(t, nsB, dnsCluster, 1, 3*time.Minute)}
	conf := onlyNameserver(c.DNSIP)
	for _, rc := range clusters {
		if rc.Service.Spec.ClusterIP != corev1.ClusterIPNone {
			t.Fatalf("head Service %s/%s has ClusterIP %q; KubeRay v1.6.2 makes it headless", rc.NS, rc.Service.Name, rc.Service.Spec.ClusterIP)
		}
		w := rc.Workers[0]
		fq := oneEnv(t, &w, w.Spec.Containers[0], "FQ_RAY_IP")
		if want := fmt.Sprintf("%s.%s.svc.%s", rc.Service.Name, rc.NS, c.ClusterDomain); fq != want {
			t.Fatalf("worker %s/%s: FQ_RAY_IP %q, want the operator's %q", rc.NS, w.Name, fq, want)
		}
		if d := duplicateEnv(&w); len(d) > 0 {
			t.Fatalf("worker %s/%s has duplicate env entries %v", rc.NS, w.Name, d)
		}
		var addrs []string
		framework.Eventually(t, 60*time.Second, time.Second, func() (bool, string) {
			var err error
			addrs, err = framework.Resolve(t, conf, fq)
			if err != nil {
				return false, err.Error()
			}
			return slices.Equal(addrs, []string{rc.Head.Status.PodIP}),
				fmt.Sprintf("%s resolves to %v, want its head Pod %s [%s]", fq, addrs, rc.Head.Name, rc.Head.Status.PodIP)
		})
		url := fmt.Sprintf("http://%s:%d/api/version", addrs[0], dashboardPort)
		v := dashboardVersion(t, "", url)
		if want := rc.NS + "/" + rc.Head.Name; v.SessionName != want {
			t.Fatalf("GET %s answered as %q, want the head %q", url, v.SessionName, want)
		}
		t.Logf("worker %s/%s: FQ_RAY_IP=%s (the operator's) -> %v = head Pod %s; GET %s: session_name %q (ray %s)",
			rc.NS, w.Name, fq, addrs, rc.Head.Name, url, v.SessionName, v.RayVersion)
	}
	// The bare name, as a Pod of B resolves it (B first), from A's worker's env.
	b := clusters[1]
	bare := b.Service.Name
	search := searchConf(c.DNSIP, c.ClusterDomain, nsB, nsA)
	url := fmt.Sprintf("http://%s:%d/api/version", bare, dashboardPort)
	v := dashboardVersion(t, search, url)
	if want := nsB + "/" + b.Head.Name; v.SessionName != want {
		t.Fatalf("GET %s with search %s first answered as %q, want B's head %q", url, nsB, v.SessionName, want)
	}
	addrs, _ := framework.Resolve(t, search, bare)
	t.Logf("bare %s with search %s first -> %v; GET %s: session_name %q (B's head %s at %s)",
		bare, nsB, addrs, url, v.SessionName, b.Head.Name, b.Head.Status.PodIP)
}
