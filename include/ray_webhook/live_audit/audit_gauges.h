// AuditGauges: where PeriodicAudit and WatchedAudit put the result of each run.
//
// Contract: the server's Metrics implements it (the audit gauges are exported
// with the server's other metrics, a layer above this one). SetAuditResult
// takes a report that read the whole cluster and the Unix time its run ended;
// CountAuditFailure counts a run that did not finish; CountWatchProblem, a
// problem of one of the watched audit's lists or watches, or an object it
// could not read (problem "unreadable_object"). All are called from the
// audit's own threads, so an implementation is thread-safe.
#pragma once

#include <string_view>

#include "ray_webhook/audit/audit_report.h"

namespace ray_webhook {

class AuditGauges {
 public:
  virtual ~AuditGauges() = default;
  virtual void SetAuditResult(const AuditReport& report, double unix_seconds) = 0;
  virtual void CountAuditFailure() = 0;
  virtual void CountWatchProblem(std::string_view resource, std::string_view problem) = 0;
};

}  // namespace ray_webhook
