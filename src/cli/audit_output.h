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
// Both end with a newline.
#pragma once

#include <string>

#include "ray_webhook/audit/audit_report.h"

namespace ray_webhook {

std::string AuditTable(const AuditReport& report);
std::string AuditJson(const AuditReport& report);

}  // namespace ray_webhook
