#include "ray_webhook/audit/policy_report.h"

#include <map>

#include "ray_webhook/audit/cost_leaks.h"
#include "ray_webhook/audit/suspended_loops.h"

namespace ray_webhook {

ReportApiInfo ReportApiOf(ReportApi api) {
  if (api == ReportApi::kWgPolicy) return {"wgpolicyk8s.io", "v1alpha2", "PolicyReport", "policyreports"};
  return {"openreports.io", "v1alpha1", "Report", "reports"};
}

std::optional<ReportApi> ParseReportApi(std::string_view group_version) {
  if (group_version == "openreports.io/v1alpha1") return ReportApi::kOpenReports;
  if (group_version == "wgpolicyk8s.io/v1alpha2") return ReportApi::kWgPolicy;
  return std::nullopt;
}

std::string_view SeverityOfRule(std::string_view rule) {
  // Two heads split a Ray cluster; a duplicate mount keeps KubeRay from
  // creating the Pods; the rest degrade or only risk it.
  if (rule == kExtraHeadRule) return "critical";
  if (rule == "duplicate-mount") return "high";
  if (rule == "head-name" || rule == "unmutated" || rule == kWorkerDriftRule) return "medium";
  if (rule == "bare-address" || rule == "duplicate-env") return "low";
  // Cost leaks: nothing is broken, but idle Pods (often GPUs) are paid for until someone acts.
  if (rule == kFinishedJobClusterRule || rule == kStuckUpgradeRule) return "medium";
  // A RayService that serves nothing, or a RayJob that does not run, until someone acts.
  if (rule == kSuspendedLoopRule) return "high";
  // KubeRay's own spec checks: the operator refuses to reconcile the object.
  return "high";
}

namespace {

std::string_view ApiVersionOfKind(std::string_view kind) { return kind == "Pod" ? "v1" : "ray.io/v1"; }

}  // namespace

std::vector<nlohmann::json> PolicyReports(const AuditReport& report, ReportApi api, std::int64_t now_unix_seconds) {
  const ReportApiInfo info = ReportApiOf(api);
  std::map<std::string, std::vector<const AuditFinding*>> by_namespace;
  for (const AuditFinding& f : report.findings) {
    // A manifest without a namespace lands in "default", as kubectl would put it.
    by_namespace[f.namespace_name.empty() ? "default" : f.namespace_name].push_back(&f);
  }
  std::vector<nlohmann::json> out;
  for (const auto& [ns, findings] : by_namespace) {
    nlohmann::json results = nlohmann::json::array();
    for (const AuditFinding* f : findings) {
      nlohmann::json resource = {{"apiVersion", ApiVersionOfKind(f->kind)},
                                 {"kind", f->kind},
                                 {"namespace", f->namespace_name},
                                 {"name", f->name}};
      nlohmann::json result = {{"source", kReportManagedByValue},
                               {"policy", "ray-webhook"},
                               {"rule", f->rule},
                               {"result", "fail"},
                               {"severity", SeverityOfRule(f->rule)},
                               {"scored", true},
                               {"message", f->message},
                               {"timestamp", {{"seconds", now_unix_seconds}, {"nanos", 0}}},
                               {"resources", nlohmann::json::array({resource})}};
      if (!f->field_path.empty()) result["properties"] = {{"fieldPath", f->field_path}};
      results.push_back(std::move(result));
    }
    nlohmann::json object = {
        {"apiVersion", std::string(info.group) + "/" + std::string(info.version)},
        {"kind", info.kind},
        {"metadata",
         {{"name", kReportName}, {"namespace", ns}, {"labels", {{kReportManagedByLabel, kReportManagedByValue}}}}},
        {"summary", {{"pass", 0}, {"fail", results.size()}, {"warn", 0}, {"error", 0}, {"skip", 0}}},
        {"results", std::move(results)}};
    if (api == ReportApi::kOpenReports) object["source"] = kReportManagedByValue;
    out.push_back(std::move(object));
  }
  return out;
}

}  // namespace ray_webhook
