// AuditCluster: the audit of what runs in a cluster, read from the
// Kubernetes API.
//
// Contract: lists, page by page (ListPages), the Ray Pods and the ray.io v1
// RayClusters, RayJobs and RayServices of every namespace (or of one) and
// feeds each page to an Auditor, so memory holds one page and the audit's
// summaries, never the whole cluster. Ray Pods are selected with
// kRayPodSelector: the labels ray-webhook itself identifies Ray Pods by, not
// app.kubernetes.io/created-by=kuberay-operator, which a Pod made behind the
// operator's back (an extra head) would not carry. A ray.io resource the API
// does not serve (KubeRay's CRDs not installed) is a note in the report, not
// an error. Needs list on pods and on the three ray.io resources
// (deploy/overlays/audit). Used by `ray-webhook audit` against a live cluster
// and by the server's periodic audit (--audit-interval); runs on the caller's
// thread and returns early with an error when `stop` says so.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "ray_webhook/audit/audit_report.h"
#include "ray_webhook/audit/cost_leaks.h"
#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/core/model/status.h"
#include "ray_webhook/kube/kube_api_client.h"

namespace ray_webhook {

inline constexpr std::string_view kRayPodSelector = "ray.io/node-type in (head,worker),ray.io/cluster";

struct ClusterAuditScope {
  std::string namespace_name;  // empty: every namespace
  std::size_t page_size = 500;
  std::chrono::milliseconds page_timeout{30000};
  // The limits of the cost-leak rules, judged at the time the last page was read.
  CostLeakLimits cost_leak_limits;
};

Result<AuditReport> AuditCluster(KubeApiClient& client, const ClusterAuditScope& scope, const PolicyConfig& policy,
                                 const std::function<bool()>& stop = {});

}  // namespace ray_webhook
