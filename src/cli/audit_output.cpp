#include "audit_output.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

namespace ray_webhook {
namespace {

constexpr std::size_t kMessageWidth = 100;
constexpr std::size_t kMaxColumn = 48;

std::string Plural(std::size_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

// Wrapped at spaces to kMessageWidth, each line indented.
std::string Wrapped(const std::string& text, const std::string& indent) {
  std::string out, line;
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t end = text.find(' ', at);
    if (end == std::string::npos) end = text.size();
    const std::string word = text.substr(at, end - at);
    at = end + 1;
    if (!line.empty() && line.size() + 1 + word.size() > kMessageWidth) {
      out += indent + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += indent + line + "\n";
  return out;
}

std::string Cell(std::string value, std::size_t width) {
  if (value.empty()) value = "-";
  if (value.size() > kMaxColumn) value = value.substr(0, kMaxColumn - 3) + "...";
  value.resize(std::max(value.size(), width), ' ');
  return value;
}

}  // namespace

std::string AuditTable(const AuditReport& report) {
  std::string out;
  if (!report.findings.empty()) {
    std::array<std::size_t, 4> width = {4, 4, 9, 4};  // RULE KIND NAMESPACE NAME
    for (const AuditFinding& f : report.findings) {
      width[0] = std::max(width[0], std::min(f.rule.size(), kMaxColumn));
      width[1] = std::max(width[1], std::min(f.kind.size(), kMaxColumn));
      width[2] = std::max(width[2], std::min(f.namespace_name.size(), kMaxColumn));
      width[3] = std::max(width[3], std::min(f.name.size(), kMaxColumn));
    }
    out += Cell("RULE", width[0]) + "  " + Cell("KIND", width[1]) + "  " + Cell("NAMESPACE", width[2]) + "  " +
           Cell("NAME", width[3]) + "  FIELD\n";
    for (const AuditFinding& f : report.findings) {
      out += Cell(f.rule, width[0]) + "  " + Cell(f.kind, width[1]) + "  " + Cell(f.namespace_name, width[2]) + "  " +
             Cell(f.name, width[3]) + "  " + (f.field_path.empty() ? "-" : f.field_path) + "\n";
      out += Wrapped(f.message, "    ");
    }
    if (report.dropped_findings > 0) {
      out += "... and " + Plural(report.dropped_findings, "more finding", "more findings") + " not shown\n";
    }
    out += "\n";
  }
  for (const std::string& note : report.notes) out += "note: " + note + "\n";
  out += "Read " + Plural(report.pods, "Pod", "Pods") + ", " +
         Plural(report.ray_clusters, "RayCluster", "RayClusters") + ", " +
         Plural(report.ray_jobs, "RayJob", "RayJobs") + ", " +
         Plural(report.ray_services, "RayService", "RayServices") + ", " +
         Plural(report.ray_cron_jobs, "RayCronJob", "RayCronJobs");
  if (report.skipped_objects > 0)
    out += " (" + Plural(report.skipped_objects, "other object", "other objects") + " skipped)";
  if (report.total_findings() == 0) return out + "; no findings.\n";
  out += "; " + Plural(report.total_findings(), "finding", "findings") + ":";
  bool first = true;
  for (const auto& [rule, count] : report.findings_by_rule) {
    out += std::string(first ? " " : ", ") + rule + " " + std::to_string(count);
    first = false;
  }
  return out + ".\n";
}

std::string AuditJson(const AuditReport& report) {
  using Json = nlohmann::ordered_json;
  Json findings = Json::array();
  for (const AuditFinding& f : report.findings) {
    findings.push_back({{"rule", f.rule},
                        {"kind", f.kind},
                        {"namespace", f.namespace_name},
                        {"name", f.name},
                        {"fieldPath", f.field_path},
                        {"message", f.message},
                        {"source", f.source}});
  }
  Json by_rule = Json::object();
  for (std::string_view rule : AuditRuleNames()) {
    auto it = report.findings_by_rule.find(rule);
    by_rule[std::string(rule)] = it == report.findings_by_rule.end() ? 0 : it->second;
  }
  // KubeRay's spec rules are many and rarely found: counted only when found.
  for (const auto& [rule, count] : report.findings_by_rule) {
    if (!by_rule.contains(rule)) by_rule[rule] = count;
  }
  Json summary = {{"findings", report.total_findings()},
                  {"droppedFindings", report.dropped_findings},
                  {"findingsByRule", by_rule},
                  {"rayClustersWithExtraHeads", report.clusters_with_extra_heads},
                  {"read",
                   {{"pods", report.pods},
                    {"rayClusters", report.ray_clusters},
                    {"rayJobs", report.ray_jobs},
                    {"rayServices", report.ray_services},
                    {"rayCronJobs", report.ray_cron_jobs},
                    {"skipped", report.skipped_objects}}},
                  {"notes", report.notes}};
  Json out = {{"findings", std::move(findings)}, {"summary", std::move(summary)}};
  return out.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string AuditReports(const AuditReport& report, ReportApi api, std::int64_t now_unix_seconds) {
  nlohmann::json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", nlohmann::json::array()}};
  for (nlohmann::json& item : PolicyReports(report, api, now_unix_seconds)) list["items"].push_back(std::move(item));
  return list.dump(2) + "\n";
}

}  // namespace ray_webhook
