// CommandLine: argv and environment -> what to run, with a complete configuration.
//
// Contract: pure; reads only what it is given (the environment comes in as a
// lookup function). Every error is one line for the user, and the caller exits
// 2 on it. Accepted forms:
//   ray-webhook serve (--tls-cert FILE --tls-key FILE | --cert-dir DIR) [flags of ServeFlags()]
//   ray-webhook review (--mutate|--validate) [--cluster-domain DOMAIN] [FILE|-]
//   ray-webhook audit [--output table|json] [--namespace NS] [--cluster-domain DOMAIN] [FILE|-]...
//   ray-webhook audit [--output table|json] [--namespace NS] [--cluster-domain DOMAIN] [API flags of serve]
//   ray-webhook --help | --version
// Flags take "--flag value" or "--flag=value". One table (ServeFlags) drives
// parsing, the unknown-flag check and the usage text, and each default is
// printed from a default ServerConfig, so none is written twice in the code.
// CLUSTER_DOMAIN in the environment is honoured as KubeRay's operator honours
// it; the flag wins. KUBERNETES_SERVICE_HOST/PORT configure the API as
// in-cluster clients do. audit reads the files given; without any, it reads
// the live cluster through the API flags of serve (the same table entries),
// or in-cluster as serve does, and is an error when neither is available.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ray_webhook/core/pod_policy.h"
#include "ray_webhook/core/status.h"
#include "ray_webhook/edge/server_config.h"

namespace ray_webhook {

enum class CommandKind { kServe, kReview, kAudit, kHelp, kVersion };

enum class AuditOutput { kTable, kJson };

struct Command {
  CommandKind kind = CommandKind::kHelp;
  ServerConfig config;                    // serve; review reads config.policy alone
  std::string log_level = "info";         // serve
  Endpoint endpoint = Endpoint::kMutate;  // review
  std::string input = "-";                // review: a file, or "-" for stdin
  // audit: the files ("-" is stdin); empty means the live cluster through config.kube_api.
  std::vector<std::string> audit_inputs;
  AuditOutput audit_output = AuditOutput::kTable;
  std::string audit_namespace;  // audit of the live cluster: one namespace; empty: all
};

using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

Result<Command> ParseCommandLine(const std::vector<std::string>& args, const EnvLookup& env);

// What `serve` is given while its flags are read: the command, and the flags
// whose meaning depends on others or on the environment, settled at the end.
struct ServeSettings {
  Command command;
  std::optional<std::string> cluster_domain, api_server, token_file, ca_file, cert_dir;
};

// One flag of `serve`. set parses the value into the settings or says what is
// wrong with it; shown prints the default from default settings ("" for none).
struct ServeFlag {
  std::string_view name;      // "--port"
  std::string_view argument;  // "N", as the usage shows it
  std::string_view section;   // the usage heading it is listed under
  std::string_view help;
  Status (*set)(ServeSettings& settings, std::string_view value);
  std::string (*shown)(const ServeSettings& defaults);
};

std::span<const ServeFlag> ServeFlags();

std::string UsageText();

}  // namespace ray_webhook
