// AuditGauges: where PeriodicAudit puts the result of each run.
//
// Contract: the server's Metrics implements it (the audit gauges are exported
// with the server's other metrics, a layer above this one). SetAuditResult
// takes a report that read the whole cluster and the Unix time its run ended;
// CountAuditFailure counts a run that did not finish. Both are called from the
// audit's own thread, so an implementation is thread-safe.
#pragma once

#include "ray_webhook/audit/audit_report.h"

namespace ray_webhook {

class AuditGauges {
 public:
  virtual ~AuditGauges() = default;
  virtual void SetAuditResult(const AuditReport& report, double unix_seconds) = 0;
  virtual void CountAuditFailure() = 0;
};

}  // namespace ray_webhook
