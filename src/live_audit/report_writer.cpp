#include "ray_webhook/live_audit/report_writer.h"

#include <set>
#include <string>

namespace ray_webhook {
namespace {

// A report holds at most kMaxAuditFindings results; a list of them, more.
constexpr std::size_t kMaxAnswerBytes = 64 * 1024 * 1024;

std::string Failed(const std::string& what, const KubeApiClient::Answer& answer) {
  std::string why =
      what + ": the Kubernetes API answered " + std::to_string(answer.status) + ": " + ApiErrorMessage(answer.body);
  // A 404 that is not about a namespace: the kind is not served, its CustomResourceDefinition is missing.
  if (answer.status == 404 && why.find("namespaces \"") == std::string::npos) {
    why += " (is the report kind's CustomResourceDefinition installed?)";
  }
  return why;
}

}  // namespace

Result<ReportWriter::Written> ReportWriter::Write(const AuditReport& report, std::int64_t now_unix_seconds) {
  const ReportApiInfo info = ReportApiOf(api_);
  const std::string base = "/apis/" + std::string(info.group) + "/" + std::string(info.version);
  const auto timeout = client_.config().timeout;
  Written written;
  std::set<std::string> with_findings;
  for (const nlohmann::json& object : PolicyReports(report, api_, now_unix_seconds)) {
    const std::string ns = object["metadata"]["namespace"].get<std::string>();
    const std::string path = base + "/namespaces/" + UrlEncode(ns) + "/" + std::string(info.resource) + "/" +
                             std::string(kReportName) + "?fieldManager=ray-webhook&force=true";
    // JSON is YAML: the apply patch takes it as it is.
    Result<KubeApiClient::Answer> answer =
        client_.Send("PATCH", path, "application/apply-patch+yaml", object.dump(), timeout, kMaxAnswerBytes);
    if (!answer.ok()) return answer.status();
    if (answer->status != 200 && answer->status != 201) {
      return Status::Error(Failed("applying the " + std::string(info.kind) + " of namespace " + ns, *answer));
    }
    with_findings.insert(ns);
    ++written.applied;
  }
  const std::string selector = std::string(kReportManagedByLabel) + "=" + std::string(kReportManagedByValue);
  Result<KubeApiClient::Answer> listed = client_.Get(
      base + "/" + std::string(info.resource) + "?labelSelector=" + UrlEncode(selector), timeout, kMaxAnswerBytes);
  if (!listed.ok()) return listed.status();
  if (listed->status != 200) return Status::Error(Failed("listing ray-webhook's reports", *listed));
  const nlohmann::json list = nlohmann::json::parse(listed->body, nullptr, false);
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) {
    return Status::Error("listing ray-webhook's reports: the answer is not a list");
  }
  for (const nlohmann::json& item : list["items"]) {
    const nlohmann::json meta = item.is_object() ? item.value("metadata", nlohmann::json::object()) : nlohmann::json();
    if (!meta.is_object() || !meta.value("name", nlohmann::json()).is_string() ||
        !meta.value("namespace", nlohmann::json()).is_string()) {
      continue;
    }
    const std::string name = meta["name"].get<std::string>();
    const std::string ns = meta["namespace"].get<std::string>();
    if (name != kReportName || with_findings.contains(ns)) continue;
    Result<KubeApiClient::Answer> deleted =
        client_.Send("DELETE", base + "/namespaces/" + UrlEncode(ns) + "/" + std::string(info.resource) + "/" + name,
                     {}, {}, timeout, kMaxAnswerBytes);
    if (!deleted.ok()) return deleted.status();
    if (deleted->status != 200 && deleted->status != 202 && deleted->status != 404) {
      return Status::Error(Failed("deleting the " + std::string(info.kind) + " of namespace " + ns, *deleted));
    }
    ++written.deleted;
  }
  return written;
}

}  // namespace ray_webhook
