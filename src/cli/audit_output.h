// AuditOutput: an AuditReport as `ray-webhook audit` prints it.
//
// Contract: pure functions of the report. AuditTable is for people: one row
// per finding (rule, kind, namespace, name, field), its message wrapped
// beneath it, and a closing line with what was read and the findings by
// rule. AuditJson is for tools, one JSON object, stable field names:
//   {"findings": [{"rule", "kind", "namespace", "name", "fieldPath", "message", "source"}],
//    "summary": {"findings", "droppedFindings", "findingsByRule" (every rule, zeros included),
//                "rayClustersWithExtraHeads", "read": {"pods", "rayClusters", "rayJobs",
//                "rayServices", "skipped"}, "notes"}}
// AuditReports is for the cluster: the policy reports (PolicyReports) as one
// v1 List that `kubectl apply -f -` takes. All end with a newline.
#pragma once

#include <cstdint>
#include <string>

#include "ray_webhook/audit/audit_report.h"
#include "ray_webhook/audit/policy_report.h"

namespace ray_webhook {

std::string AuditTable(const AuditReport& report);
std::string AuditJson(const AuditReport& report);
std::string AuditReports(const AuditReport& report, ReportApi api, std::int64_t now_unix_seconds);

}  // namespace ray_webhook
