// Package framework attaches the Go end-to-end suite (tests/e2e/*_test.go) to
// a cluster that scripts/e2e.sh brought up and left running (--up or --keep):
// kube-apiserver, etcd, kube-controller-manager, kube-scheduler, KWOK's node
// kwok-node-0, CoreDNS, the Ray stand-in and ray-webhook installed from
// deploy/. It starts nothing of that itself; it only adds, per test, what a
// test needs on top (an operator, a CoreDNS, a ray-webhook replica) and
// removes it again.
//
// The contract:
//
//   - The cluster is named by the file in env E2E_CLUSTER_ENV: KEY=VALUE lines
//     written by scripts/e2e.sh (write_cluster_env). When E2E_CLUSTER_ENV is
//     unset, the file is missing or a key is absent, every test fails with a
//     message that says so; nothing is skipped.
//   - Attach(t) returns the Cluster: those values, and client-go clients (typed
//     Kube, Dynamic, the rest.Config) built from KUBECONFIG.
//   - Every helper that takes t registers its own undo with t.Cleanup, so a
//     test leaves the cluster as it found it: NewNamespace deletes the
//     namespace, Operator stops the operator and removes its CRDs, StartCoreDNS
//     and StartReplica stop their process (StartReplica and PointSlice point
//     the EndpointSlice back at the shipped replica first), SwapVolume swaps
//     the old content back, Resolve and HTTPGetInNetns restore
//     /etc/netns/NETNS/resolv.conf. The shipped replica is never stopped or
//     reconfigured: a test that needs other flags starts a replica.
//   - Failures are t.Fatalf with the reason (and the tail of a process's log
//     when a process did not come up); Eventually reports the last reason its
//     condition gave.
//   - Processes started here log to LOGS/go-<name>-<n>.log and are stopped with
//     SIGTERM, then SIGKILL after 40 s.
//   - Nothing is dialled but loopback and the suite's own 10.200.x addresses:
//     the API server on 127.0.0.1, CoreDNS on DNS_IP/DNS_IP2, Pod IPs in
//     POD_CIDR (local to this machine) and the webhook addresses.
//
// The helpers:
//
//	Attach(t) *Cluster                        the cluster and its clients
//	NewNamespace(t, prefix) string            a fresh namespace whose default ServiceAccount exists
//	Eventually(t, timeout, poll, cond)        poll cond until true, else fail with its last reason
//	Operator(t, release, env...)              CRDs of that KubeRay release, and its operator running
//	Toleration() corev1.Toleration            tolerates the KWOK node's taint
//	Resolve(t, resolvConf, name)              getent ahostsv4 NAME on the test host (NETNS)
//	HTTPGetInNetns(t, resolvConf, url)        an HTTP GET from the test host (NETNS)
//	StartCoreDNS(t, zone, ip)                 a second CoreDNS serving ZONE from the API server
//	WebhookReplica(t, extraArgs, env)         a ray-webhook replica the webhook Service routes to
//	StartReplica(t, ReplicaOptions)           the same with its address, port, ServiceAccount volume, API URL, routing
//	PointSlice(t, port, endpoints...)         the webhook Service's EndpointSlice as the endpoint controller writes it
//	RoutedTo(t, log)                          the webhook calls reach the replica logging to LOG
//	Kubectl(t, stdin, args...)                what kubectl prints a user (warnings, errors), and its exit
//	KubeWithWarnings(t)                       a client that records the warnings the API server relays
//	NewVolume / SwapVolume(t, dir, files)     a kubelet-style volume (..data), and its atomic update
//	CountLines / Lines / WaitLines            lines of a process's log
//	Manifest(t, file, vars) / Create(t, ns, obj)  testdata objects with @KEY@ replaced, created
//
// A test package that wants HTTPGetInNetns to work without curl calls
// framework.Main(m) from its TestMain: the test binary then doubles as the
// small HTTP client run inside the network namespace.
package framework
