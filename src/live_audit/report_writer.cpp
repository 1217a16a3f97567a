#include "ray_webhook/live_audit/report_writer.h"

#include <functional>
#include <set>
#include <string>

#include "ray_webhook/audit/cost_leaks.h"

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

// Each namespace's findings, as far as its report says more than the time: order matters (it is the
// report's), and a message that changes only with the time is left out.
std::map<std::string, std::size_t> Digests(const AuditReport& report) {
  std::map<std::string, std::size_t> out;
  for (const AuditFinding& f : report.findings) {
    std::size_t& d = out[f.namespace_name.empty() ? "default" : f.namespace_name];
    for (const std::string* part : {&f.rule, &f.kind, &f.name, &f.field_path}) {
      d = d * 1099511628211ULL ^ std::hash<std::string>{}(*part);
    }
    if (!RuleJudgedOverTime(f.rule)) d = d * 1099511628211ULL ^ std::hash<std::string>{}(f.message);
  }
  return out;
}

std::string NamespaceOf(const nlohmann::json& report) { return report["metadata"]["namespace"].get<std::string>(); }

}  // namespace

std::string ReportWriter::Base() const {
  const ReportApiInfo info = ReportApiOf(api_);
  return "/apis/" + std::string(info.group) + "/" + std::string(info.version);
}

Status ReportWriter::Apply(const nlohmann::json& object) {
  const ReportApiInfo info = ReportApiOf(api_);
  const std::string ns = NamespaceOf(object);
  const std::string path = Base() + "/namespaces/" + UrlEncode(ns) + "/" + std::string(info.resource) + "/" +
                           std::string(kReportName) + "?fieldManager=ray-webhook&force=true";
  // JSON is YAML: the apply patch takes it as it is.
  Result<KubeApiClient::Answer> answer = client_.Send("PATCH", path, "application/apply-patch+yaml", object.dump(),
                                                      client_.config().timeout, kMaxAnswerBytes);
  if (!answer.ok()) return answer.status();
  if (answer->status != 200 && answer->status != 201) {
    return Status::Error(Failed("applying the " + std::string(info.kind) + " of namespace " + ns, *answer));
  }
  return Status::Ok();
}

Status ReportWriter::Delete(const std::string& ns) {
  const ReportApiInfo info = ReportApiOf(api_);
  Result<KubeApiClient::Answer> deleted = client_.Send(
      "DELETE",
      Base() + "/namespaces/" + UrlEncode(ns) + "/" + std::string(info.resource) + "/" + std::string(kReportName), {},
      {}, client_.config().timeout, kMaxAnswerBytes);
  if (!deleted.ok()) return deleted.status();
  if (deleted->status != 200 && deleted->status != 202 && deleted->status != 404) {
    return Status::Error(Failed("deleting the " + std::string(info.kind) + " of namespace " + ns, *deleted));
  }
  return Status::Ok();
}

Result<ReportWriter::Written> ReportWriter::WriteChanges(const AuditReport& report, std::int64_t now_unix_seconds) {
  std::map<std::string, std::size_t> digests = Digests(report);
  if (!written_) {
    Result<Written> written = Write(report, now_unix_seconds);
    if (written.ok()) written_ = std::move(digests);
    return written;
  }
  Written written;
  for (const nlohmann::json& object : PolicyReports(report, api_, now_unix_seconds)) {
    const std::string ns = NamespaceOf(object);
    const auto before = written_->find(ns);
    if (before != written_->end() && before->second == digests[ns]) continue;
    if (Status s = Apply(object); !s.ok()) {
      written_.reset();
      return s;
    }
    (*written_)[ns] = digests[ns];
    ++written.applied;
  }
  for (auto it = written_->begin(); it != written_->end();) {
    if (digests.contains(it->first)) {
      ++it;
      continue;
    }
    if (Status s = Delete(it->first); !s.ok()) {
      written_.reset();
      return s;
    }
    it = written_->erase(it);
    ++written.deleted;
  }
  return written;
}

Result<ReportWriter::Written> ReportWriter::Write(const AuditReport& report, std::int64_t now_unix_seconds) {
  const ReportApiInfo info = ReportApiOf(api_);
  const std::string base = Base();
  const auto timeout = client_.config().timeout;
  Written written;
  std::set<std::string> with_findings;
  for (const nlohmann::json& object : PolicyReports(report, api_, now_unix_seconds)) {
    if (Status s = Apply(object); !s.ok()) return s;
    with_findings.insert(NamespaceOf(object));
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
    if (Status s = Delete(ns); !s.ok()) return s;
    ++written.deleted;
  }
  return written;
}

}  // namespace ray_webhook
