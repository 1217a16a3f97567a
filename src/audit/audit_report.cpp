#include "ray_webhook/audit/audit_report.h"

#include "ray_webhook/audit/cost_leaks.h"
#include "ray_webhook/audit/suspended_loops.h"

namespace ray_webhook {

std::span<const std::string_view> AuditRuleNames() {
  static constexpr std::string_view kNames[] = {
      "duplicate-mount", "head-name",      "duplicate-env",         "bare-address",    "unmutated",
      kExtraHeadRule,    kWorkerDriftRule, kFinishedJobClusterRule, kStuckUpgradeRule, kSuspendedLoopRule};
  return kNames;
}

void AddFinding(AuditReport& report, AuditFinding finding) {
  ++report.findings_by_rule[finding.rule];
  if (report.findings.size() < kMaxAuditFindings) {
    report.findings.push_back(std::move(finding));
  } else {
    ++report.dropped_findings;
  }
}

}  // namespace ray_webhook
