// PolicyReports: an AuditReport as the policy reports that Kyverno,
// Kubewarden and Policy Reporter read: openreports.io/v1alpha1 Report (the
// default) or the Policy WG's wgpolicyk8s.io/v1alpha2 PolicyReport.
//
// Contract: a pure function of the report. One report per namespace that has
// findings, named kReportName, labelled managed-by ray-webhook, sorted by
// namespace; one result per finding: policy "ray-webhook", rule the finding's
// rule, result fail, a severity by rule, the message, the object as its
// resource (with the field path when there is one), scored, timestamped
// `now`. The summary counts the results. A namespace without findings has no
// report: the writer deletes the one it left earlier.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ray_webhook/audit/audit_report.h"

namespace ray_webhook {

enum class ReportApi { kOpenReports, kWgPolicy };

struct ReportApiInfo {
  std::string_view group;     // "openreports.io"
  std::string_view version;   // "v1alpha1"
  std::string_view kind;      // "Report"
  std::string_view resource;  // "reports", for the API's paths
};
ReportApiInfo ReportApiOf(ReportApi api);
// "openreports.io/v1alpha1" or "wgpolicyk8s.io/v1alpha2"; nullopt otherwise.
std::optional<ReportApi> ParseReportApi(std::string_view group_version);

inline constexpr std::string_view kReportName = "ray-webhook-audit";
inline constexpr std::string_view kReportManagedByLabel = "app.kubernetes.io/managed-by";
inline constexpr std::string_view kReportManagedByValue = "ray-webhook";

// "critical", "high", "medium", "low" or "info".
std::string_view SeverityOfRule(std::string_view rule);

std::vector<nlohmann::json> PolicyReports(const AuditReport& report, ReportApi api, std::int64_t now_unix_seconds);

}  // namespace ray_webhook
