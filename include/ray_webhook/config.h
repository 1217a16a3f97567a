// The server's whole configuration: built once from flags and environment
// (see command_line.h) and passed down by const reference. The core reads only
// the policy fields; the edges read the rest.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "ray_webhook/kube_api_client.h"

namespace ray_webhook {

// How a rule acts: deny, allow with a warning (to roll a webhook out safely),
// or not at all.
enum class RuleMode { kEnforce, kWarn, kOff };

// Which head-uniqueness mechanisms run: the deterministic head name (mutate
// plus the validating name rule), the second-head lookup, both, or neither.
struct HeadUniqueness {
  bool name = true;
  bool lookup = true;
};

struct Config {
  // Listener.
  std::string bind_address = "0.0.0.0";
  int port = 8443;
  // Plain HTTP, /healthz and /readyz only: kubelet probes need no client
  // certificate when the webhook port requires one (controller-runtime's
  // manager serves its probes on :8081 the same way). 0: none.
  int probe_port = 8081;
  // Reloaded without a restart when the files change (ServingCertificate).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string client_ca_file;  // when set, clients must present a certificate it signed
  int tls_min_version = 12;    // 12 or 13
  std::chrono::milliseconds cert_reload_interval{2000};
  // Workers for reviews that wait on the Kubernetes API (the second-head
  // lookup), started on demand; every other request is answered on the
  // event loop that read it (ConnectionLoop). At most max_connections are
  // open at once.
  int threads = 64;
  int max_connections = 2048;
  // Keep-alive wait between requests, and the deadline to read and answer
  // one request (a slow client is cut off, not waited for).
  std::chrono::milliseconds idle_timeout{30000};
  std::chrono::milliseconds request_timeout{10000};
  // After a wait for a request that was this short or shorter, a worker
  // that finds none ready polls this long before it sleeps
  // (ConnectionLoop::Options::busy_poll).
  std::chrono::microseconds busy_poll{100};
  // Graceful shutdown: /readyz is 503 and the listener still accepts for
  // drain_delay, so endpoints can update; the process exits within
  // shutdown_grace after that.
  std::chrono::milliseconds drain_delay{5000};
  std::chrono::milliseconds shutdown_grace{30000};
  std::string log_level = "info";

  // Policy. KubeRay's operator reads CLUSTER_DOMAIN with this default (PR #951).
  std::string cluster_domain = "cluster.local";
  HeadUniqueness head_uniqueness;
  RuleMode head_name_mode = RuleMode::kEnforce;
  RuleMode second_head_mode = RuleMode::kEnforce;
  RuleMode duplicate_mount_mode = RuleMode::kEnforce;
  // When the API cannot answer the second-head lookup: allow with a warning
  // (false) or deny (true).
  bool deny_on_lookup_failure = false;

  // The Kubernetes API, for the second-head lookup; unconfigured outside a
  // cluster unless flags say otherwise.
  KubeApiConfig kube_api;

  // Limits. 7 MiB is controller-runtime's webhook body limit; kube-apiserver
  // itself sends at most about 2 x 3 MiB.
  std::size_t max_body_bytes = 7 * 1024 * 1024;
};

}  // namespace ray_webhook
