#include "audit_command.h"

#include <ctime>

#include "audit_output.h"
#include "manifest_files.h"
#include "ray_webhook/audit/auditor.h"
#include "ray_webhook/kube/kube_api_client.h"
#include "ray_webhook/live_audit/cluster_audit.h"

namespace ray_webhook {
namespace {

Result<AuditReport> AuditFiles(const Command& command, std::istream& in) {
  Auditor auditor(command.config.policy, command.config.cost_leak_limits);
  for (const std::string& path : command.audit_inputs) {
    Status read = ForEachManifestDocument(
        path, in, [&](std::string_view json_text, std::size_t readable_padding, const std::string& source) {
          return auditor.AddDocument(json_text, source, readable_padding);
        });
    if (!read.ok()) return read;
  }
  // A dump is judged at the time of the audit, as what it shows may still run.
  return auditor.Finish(static_cast<std::int64_t>(std::time(nullptr)));
}

Result<AuditReport> AuditApi(const Command& command) {
  KubeApiClient client(command.config.kube_api);
  ClusterAuditScope scope;
  scope.namespace_name = command.audit_namespace;
  scope.page_timeout = command.config.kube_api.timeout;
  scope.cost_leak_limits = command.config.cost_leak_limits;
  return AuditCluster(client, scope, command.config.policy);
}

}  // namespace

int RunAudit(const Command& command, std::istream& in, std::ostream& out, std::ostream& err) {
  Result<AuditReport> report = command.audit_inputs.empty() ? AuditApi(command) : AuditFiles(command, in);
  if (!report.ok()) {
    err << "ray-webhook audit: " << report.error() << "\n";
    return 2;
  }
  switch (command.audit_output) {
    case AuditOutput::kTable: out << AuditTable(*report); break;
    case AuditOutput::kJson: out << AuditJson(*report); break;
    case AuditOutput::kReport: out << AuditReports(*report, command.report_api, std::time(nullptr)); break;
  }
  out.flush();
  return report->total_findings() == 0 ? 0 : 1;
}

}  // namespace ray_webhook
