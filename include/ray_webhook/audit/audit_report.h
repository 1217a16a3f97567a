// AuditReport: what `ray-webhook audit` and the server's periodic audit found
// in a set of Kubernetes objects.
//
// Contract: plain data made by Auditor::Finish and read by the printers (the
// command line's table and JSON) and by the server's gauges. Findings come
// in the order the objects were read, the cross-object rules' last. At most
// kMaxAuditFindings are kept; the counts by rule count every finding.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ray_webhook {

// The rules that need a view of many objects.
inline constexpr std::string_view kExtraHeadRule = "extra-head";
inline constexpr std::string_view kWorkerDriftRule = "worker-drift";

// Every rule an audit reports, in the order the usage and the gauges list
// them: the per-object rules of the webhook, then the cross-object ones.
std::span<const std::string_view> AuditRuleNames();

inline constexpr std::size_t kMaxAuditFindings = 10000;

struct AuditFinding {
  std::string rule;
  std::string kind;  // "Pod", "RayCluster", "RayJob", "RayService"
  std::string namespace_name;
  std::string name;
  std::string field_path;  // may be empty: the finding is about the whole object
  std::string message;
  std::string source;  // where the object was read: "dump.json document 1 item 4", "API pods page 2"
};

struct AuditReport {
  std::vector<AuditFinding> findings;
  std::size_t dropped_findings = 0;  // beyond kMaxAuditFindings
  std::map<std::string, std::size_t, std::less<>> findings_by_rule;
  // What was read.
  std::size_t pods = 0, ray_clusters = 0, ray_jobs = 0, ray_services = 0, ray_cron_jobs = 0;
  std::size_t skipped_objects = 0;  // other kinds, e.g. Events in a dump
  // RayClusters with more than one live head Pod (rule extra-head).
  std::size_t clusters_with_extra_heads = 0;
  // What the reader could not read and why, e.g. a resource the API does not serve.
  std::vector<std::string> notes;

  std::size_t total_findings() const { return findings.size() + dropped_findings; }
};

// Adds a finding, counted by rule; beyond kMaxAuditFindings it is counted, not kept.
void AddFinding(AuditReport& report, AuditFinding finding);

}  // namespace ray_webhook
