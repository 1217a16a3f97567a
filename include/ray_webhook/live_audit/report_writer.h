// ReportWriter: the periodic audit's findings as policy reports in the cluster
// (PolicyReports: openreports.io Reports or wgpolicyk8s.io PolicyReports).
//
// Contract: Write() server-side applies (PATCH, fieldManager ray-webhook,
// force) the report of every namespace with findings, so each is updated in
// place, then deletes ray-webhook's reports (label managed-by ray-webhook,
// name kReportName) of every namespace that has none left, so a finding that
// went away leaves no result behind. Each call is bounded by the client's
// timeout. A failed call ends the run with an error naming it; the next run
// writes everything again. Not thread-safe: the audit's thread alone calls it.
#pragma once

#include <cstdint>

#include "ray_webhook/audit/audit_report.h"
#include "ray_webhook/audit/policy_report.h"
#include "ray_webhook/core/model/status.h"
#include "ray_webhook/kube/kube_api_client.h"

namespace ray_webhook {

class ReportWriter {
 public:
  ReportWriter(KubeApiClient& client, ReportApi api) : client_(client), api_(api) {}

  // What was written and deleted, for the audit's log line.
  struct Written {
    std::size_t applied = 0;
    std::size_t deleted = 0;
  };
  Result<Written> Write(const AuditReport& report, std::int64_t now_unix_seconds);

 private:
  KubeApiClient& client_;
  const ReportApi api_;
};

}  // namespace ray_webhook
