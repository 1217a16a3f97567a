// Command: what one run of ray-webhook is to do, as the command line settles it.
//
// Contract: plain data, complete once parsed: serve, review and audit read
// everything they need from it (serve its ServerConfig, review the policy
// part alone), never argv or the environment again.
#pragma once

#include <string>
#include <vector>

#include "ray_webhook/audit/policy_report.h"
#include "ray_webhook/core/review/pod_policy.h"
#include "ray_webhook/server/server_config.h"

namespace ray_webhook {

enum class CommandKind { kServe, kReview, kAudit, kHelp, kVersion };

// kReport: the policy reports of report_api (PolicyReports), as a v1 List.
enum class AuditOutput { kTable, kJson, kReport };

struct Command {
  CommandKind kind = CommandKind::kHelp;
  ServerConfig config;                    // serve; review reads config.policy alone
  std::string log_level = "info";         // serve
  Endpoint endpoint = Endpoint::kMutate;  // review
  std::string input = "-";                // review: a file, or "-" for stdin
  // audit: the files ("-" is stdin); empty means the live cluster through config.kube_api.
  std::vector<std::string> audit_inputs;
  AuditOutput audit_output = AuditOutput::kTable;
  std::string audit_namespace;                     // audit of the live cluster: one namespace; empty: all
  ReportApi report_api = ReportApi::kOpenReports;  // audit --output report
};

}  // namespace ray_webhook
