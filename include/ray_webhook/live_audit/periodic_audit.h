// PeriodicAudit: the cross-object audit of the live cluster, every
// --audit-interval, on a thread of its own.
//
// Contract: Start() runs AuditCluster at once and then `interval` after each
// run ends, never on a request worker or an event loop, so a slow or large
// cluster delays no review. Each run sets the audit gauges (AuditGauges) from a
// report that read the whole cluster; a run that fails counts a failure,
// logs why (once per distinct reason) and leaves the gauges at the last good
// result. With a report API, each good report is also written as policy
// reports (ReportWriter); a write that fails is logged once per reason and
// tried again on the next run. Stop() (and the destructor) wakes the thread and joins it; a run in
// progress stops between pages, so Stop() waits at most one page's timeout.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <optional>
#include <string>
#include <thread>

#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/kube/kube_api_client.h"
#include "ray_webhook/live_audit/audit_gauges.h"
#include "ray_webhook/live_audit/cluster_audit.h"
#include "ray_webhook/live_audit/report_writer.h"
#include "ray_webhook/mutex.h"

namespace ray_webhook {

class PeriodicAudit {
 public:
  // policy: read at the start of each run (the release in force may change between runs).
  PeriodicAudit(KubeApiClient& client, std::function<PolicyConfig()> policy, std::chrono::milliseconds interval,
                AuditGauges& gauges, std::optional<ReportApi> reports = std::nullopt, CostLeakLimits limits = {});
  ~PeriodicAudit();
  PeriodicAudit(const PeriodicAudit&) = delete;
  PeriodicAudit& operator=(const PeriodicAudit&) = delete;

  void Start();
  void Stop();

 private:
  void Run();
  void AuditOnce();

  KubeApiClient& client_;
  const std::function<PolicyConfig()> policy_;
  const std::chrono::milliseconds interval_;
  AuditGauges& gauges_;
  ClusterAuditScope scope_;  // every namespace, with the cost-leak limits given
  Mutex mutex_;              // for wake_ alone: stopping_ is atomic
  std::condition_variable wake_;
  std::atomic<bool> stopping_{false};
  std::optional<ReportWriter> reports_;
  std::string last_error_;         // the thread's own
  std::string last_report_error_;  // the thread's own
  std::thread thread_;
};

}  // namespace ray_webhook
