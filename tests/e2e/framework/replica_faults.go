package framework

import (
	"strings"
	"testing"
)

// StartPeerReplica starts one more ray-webhook replica beside the one
// StartReplica started, as a Deployment of two replicas runs them: the same
// command, probes and publishing of its readiness as StartReplica's, on its
// own address. opts.IP and opts.Port are required: an EndpointSlice has one
// port list, so the port is the other replica's, and the address must be
// neither WEBHOOK_IP nor WEBHOOK_IP2 (DNS_IP2 is free on any port but 53).
// It never routes: the test points the slice (PointSlice). The replica is
// stopped when t ends.
func StartPeerReplica(t testing.TB, opts ReplicaOptions) *Replica {
	t.Helper()
	c := Attach(t)
	if opts.IP == "" || opts.IP == c.WebhookIP || opts.IP == c.WebhookIP2 || opts.Port == 0 {
		t.Fatalf("StartPeerReplica: want an address other than %s and %s, and a port; got %s:%d",
			c.WebhookIP, c.WebhookIP2, opts.IP, opts.Port)
	}
	if opts.Route != RouteNone {
		t.Fatalf("StartPeerReplica: the test routes (RouteNone)")
	}
	if opts.Name == "" {
		opts.Name = "ray-webhook-peer"
	}
	if opts.CertDir == "" {
		opts.CertDir = c.WebhookCertDir
	}
	if opts.SADir == "" {
		opts.SADir = c.SADir
	}
	if opts.APIServer == "" {
		opts.APIServer = c.APIServer
	}
	if opts.Slice == (SliceRef{}) {
		opts.Slice = ServiceSlice
	}
	r := &Replica{IP: opts.IP, Port: opts.Port, t: t, c: c, name: opts.Name, slice: opts.Slice}
	r.ProbePort = freePort(t, r.IP)
	for r.ProbePort == r.Port {
		r.ProbePort = freePort(t, r.IP)
	}
	base := c.WebhookArgs
	if opts.BaseArgs != nil {
		base = opts.BaseArgs
	}
	r.Args = append([]string{"--bind", r.IP, "--port", itoa(r.Port)}, base...)
	r.Args = append(r.Args, opts.Args...)
	r.Args = append(r.Args, "--probe-port="+itoa(r.ProbePort))
	r.Env = append([]string{"CLUSTER_DOMAIN=" + c.ClusterDomain}, opts.Env...)
	r.certDir, r.saDir, r.api = opts.CertDir, opts.SADir, opts.APIServer
	r.Start(t)
	t.Logf("ray-webhook peer replica on %s:%d (args %s; log %s)",
		r.IP, r.Port, strings.Join(append(append([]string{}, base...), opts.Args...), " "), r.Process.Log)
	return r
}
