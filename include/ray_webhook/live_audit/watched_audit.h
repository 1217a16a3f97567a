// WatchedAudit: the server's audit of the live cluster kept by lists and
// watches (--audit-mode watch, the default), instead of listing everything
// again every --audit-interval.
//
// Contract: one thread per collection (the Ray Pods selected by
// kRayPodSelector; RayClusters, RayJobs, RayServices and RayCronJobs of
// ray.io/v1) lists it once and then watches it (ListWatch: resourceVersions,
// bookmarks, a list again after a 410, backoff after errors) into a
// ClusterView, which keeps each object's facts, not the object. A collection
// the API does not serve (its CRD missing) counts as empty and is listed
// again every max_backoff. Once every collection has been listed, a judging
// thread judges the view `settle` after a change (a burst of changes is
// judged once; never more often than the last judgement took, times four) and
// when a rule over time comes due, and at least every `refresh`: each
// judgement sets the gauges (AuditGauges) and, with a report API, writes the
// reports that changed (ReportWriter::WriteChanges; a failed write is tried
// again `settle` plus a backoff later). A list that fails, a watch the API
// refuses or one that cannot connect counts as an audit failure (CountAuditFailure), as a periodic run
// that cannot read the cluster; the gauges keep the view's last judgement.
// When the policy in force changes
// (another KubeRay release), the view is dropped and every collection listed
// again, so each object is judged by the new rules. Problems of the lists and
// watches, and objects that cannot be read, are counted (CountWatchProblem)
// and logged once per kind; none stops the audit or touches a review. Stop()
// (and the destructor) returns within about a second, except while a list
// page is read.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "ray_webhook/audit/cost_leaks.h"
#include "ray_webhook/audit/policy_report.h"
#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/kube/kube_api_client.h"
#include "ray_webhook/kube/list_watch.h"
#include "ray_webhook/live_audit/audit_gauges.h"

namespace ray_webhook {

struct WatchedAuditOptions {
  std::chrono::milliseconds refresh{std::chrono::minutes(5)};  // --audit-interval
  std::chrono::milliseconds settle{500};
  CostLeakLimits cost_leak_limits;
  std::optional<ReportApi> reports;
  ListWatchOptions watch;  // collection_path and label_selector are set per collection
};

class WatchedAudit {
 public:
  // policy: the policy in force; a different address is a different policy (CurrentPolicy keeps each one).
  WatchedAudit(KubeApiClient& client, std::function<const PolicyConfig*()> policy, AuditGauges& gauges,
               WatchedAuditOptions options);
  ~WatchedAudit();
  WatchedAudit(const WatchedAudit&) = delete;
  WatchedAudit& operator=(const WatchedAudit&) = delete;

  void Start();
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ray_webhook
