// ServerConfig: the whole configuration of a serving process, one part per
// layer: the listener and connection limits (read by the edge), TLS, the
// Kubernetes API, and the review policy (the only part the core sees).
//
// Contract: plain data, built once from flags and environment (the command
// line's flag table) and passed down by const reference.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include "ray_webhook/audit/cost_leaks.h"
#include "ray_webhook/audit/policy_report.h"
#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/kube/kube_api_client.h"
#include "ray_webhook/operator_release/release_follower.h"
#include "ray_webhook/tls/tls_config.h"

namespace ray_webhook {

struct ServerConfig {
  std::string bind_address = "0.0.0.0";
  int port = 8443;
  // Plain HTTP, /healthz and /readyz only: kubelet probes need no client
  // certificate when the webhook port requires one (controller-runtime's
  // manager serves its probes on :8081 the same way). 0: none.
  int probe_port = 8081;
  // Workers for reviews that wait on the Kubernetes API (the second-head
  // lookup), started on demand; every other request is answered on the
  // event loop that read it (ConnectionLoop).
  int threads = 64;
  int max_connections = 2048;
  // Keep-alive wait between requests, and the deadline to read and answer
  // one request (a slow client is cut off, not waited for).
  std::chrono::milliseconds idle_timeout{30000};
  std::chrono::milliseconds request_timeout{10000};
  // ConnectionLoop::Options::busy_poll.
  std::chrono::microseconds busy_poll{100};
  // Graceful shutdown: /readyz is 503 and the listener still accepts for
  // drain_delay, so endpoints can update; the process exits within
  // shutdown_grace after that.
  std::chrono::milliseconds drain_delay{5000};
  std::chrono::milliseconds shutdown_grace{30000};
  // 7 MiB is controller-runtime's webhook body limit; kube-apiserver itself
  // sends at most about 2 x 3 MiB.
  std::size_t max_body_bytes = 7 * 1024 * 1024;

  // The audit of the cluster (the audit gauges on /metrics); 0 is off. Needs
  // the Kubernetes API and the RBAC of deploy/overlays/audit. With
  // audit_watch (WatchedAudit) the longest time between two judgements; else
  // (PeriodicAudit) between the end of one run and the start of the next.
  std::chrono::milliseconds audit_interval{0};
  bool audit_watch = true;  // --audit-mode watch; false: list
  // Where the audit also writes its findings as policy reports
  // (ReportWriter); nullopt: the gauges alone.
  std::optional<ReportApi> audit_reports = ReportApi::kOpenReports;
  // The limits of the rules over time (--audit-finished-job-grace, --audit-pending-cluster-limit,
  // --audit-suspended-limit), for the periodic audit and `ray-webhook audit` alike.
  CostLeakLimits cost_leak_limits;

  // --kuberay-version auto: the release and feature gates come from the
  // KubeRay operator's Deployment (ReleaseFollower), and policy.kuberay is
  // the fixed release it falls back to. Needs the Kubernetes API and
  // get/list/watch on Deployments.
  bool kuberay_auto = false;
  std::string kuberay_operator_namespace;  // empty: every namespace
  std::string kuberay_operator_selector{kOperatorSelector};

  TlsConfig tls;
  // For the second-head lookup; unconfigured outside a cluster unless flags say otherwise.
  KubeApiConfig kube_api;
  PolicyConfig policy;
};

}  // namespace ray_webhook
