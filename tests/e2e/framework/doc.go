// Package framework runs the Go end-to-end suite (tests/e2e/*_test.go) on a
// whole cluster: kube-apiserver, etcd, kube-controller-manager,
// kube-scheduler, KWOK's node kwok-node-0, kube-proxy, CoreDNS, the Ray
// stand-in and ray-webhook installed from deploy/. BringUp starts that cluster and
// Running.Stop stops it (Main does both around the tests, as envtest does for
// controller-runtime's); per test, helpers add what a test needs on top (an
// operator, a CoreDNS, a ray-webhook replica) and remove it again.
//
// Bringing up (BringUp, Main, cmd/e2e-cluster):
//
//   - Needs root (a network namespace, a local route, mount namespaces for
//     the operators) and the binaries `scripts/e2e.sh --build` puts in
//     tests/e2e/.bin. Every process logs to WORK/logs/NAME.log; WORK/processes
//     lists them, so `e2e-cluster down` (WORK/stop.sh) stops a cluster whose
//     starter has exited. On an error BringUp stops what it started.
//   - Nothing is dialled but loopback and the suite's own 10.200.x addresses:
//     etcd, the API server, the controllers and the operators listen on
//     127.0.0.1; ray-webhook and CoreDNS on the host end of a veth pair to the
//     "test host" namespace (a free 10.200.0.x/29); Pod addresses come from a
//     range made local to this machine (POD_CIDR, default the first free /22
//     of 10.200.64.0/18), so KWOK's addresses are never routed off it.
//     kube-proxy (nftables mode, else iptables) routes ClusterIPs to them,
//     for one cluster per machine (KUBE_PROXY says which mode, or none and
//     why). What a killed run left (its namespace, its range, kube-proxy's
//     rules) the next BringUp removes.
//
// The contract:
//
//   - The cluster is named by the file in env E2E_CLUSTER_ENV: KEY=VALUE lines
//     that BringUp wrote (WORK/cluster.env). Main sets it for the cluster it
//     brings up; set by hand, the tests attach to a cluster left running
//     (`scripts/e2e.sh --up`). When the file is unusable or a key is absent,
//     every test fails with a message that says so; nothing is skipped.
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
//	RunRayPods(t, ns, Kubelet{}, files...)    real Ray in the Pods labelled e2e.ray-webhook.io/run=ray:
//	                                          a network namespace holding each Pod's IP, the kubelet's
//	                                          resolv.conf, KubeRay's command, readiness by its probe,
//	                                          restarts, exit phases, graceful deletion (Deaths, Log);
//	                                          files: the image's /home/ray
//	RunInTestHost(t, resolvConf, timeout, argv...)  a command on the test host (NETNS)
//	RayCommand(t, name)                       ray or python of Ray's environment (RAY_VENV)
//
// A test package that wants HTTPGetInNetns to work without curl calls
// framework.Main(m) from its TestMain: the test binary then doubles as the
// small HTTP client run inside the network namespace.
package framework
