// ReportWriter: the periodic audit's findings as policy reports in the cluster
// (PolicyReports: openreports.io Reports or wgpolicyk8s.io PolicyReports).
//
// Contract: Write() server-side applies (PATCH, fieldManager ray-webhook,
// force) the report of every namespace with findings, so each is updated in
// place, then deletes ray-webhook's reports (label managed-by ray-webhook,
// name kReportName) of every namespace that has none left, so a finding that
// went away leaves no result behind. Each call is bounded by the client's
// timeout. A failed call ends the run with an error naming it; the next run
// writes everything again. WriteChanges is for an audit that judges on every
// change (WatchedAudit): its first call (and the first after a failure) is a
// Write; later ones apply only the reports of namespaces whose findings
// changed, other than by the passing of time (a cost leak's age in its
// message: RuleJudgedOverTime), and delete only those of namespaces whose
// findings are all gone, so an unchanged cluster costs the API nothing. Not
// thread-safe: the audit's thread alone calls it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

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
  Result<Written> WriteChanges(const AuditReport& report, std::int64_t now_unix_seconds);

 private:
  Status Apply(const nlohmann::json& object);
  Status Delete(const std::string& namespace_name);
  std::string Base() const;

  KubeApiClient& client_;
  const ReportApi api_;
  // What the last write left, a digest of each namespace's findings; none until a Write succeeds.
  std::optional<std::map<std::string, std::size_t>> written_;
};

}  // namespace ray_webhook
