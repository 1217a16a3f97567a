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
	r, base := newReplica(t, c, opts)
	r.Start(t)
	t.Logf("ray-webhook peer replica on %s:%d (args %s; log %s)",
		r.IP, r.Port, strings.Join(append(append([]string{}, base...), opts.Args...), " "), r.Process.Log)
	return r
}
