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
// Flags take "--flag value" or "--flag=value". One table (ServeFlags,
// flag_table.h) drives parsing, the unknown-flag check and the usage text, and
// each default is printed from a default ServerConfig, so none is written
// twice in the code.
// CLUSTER_DOMAIN in the environment is honoured as KubeRay's operator honours
// it; the flag wins. KUBERNETES_SERVICE_HOST/PORT configure the API as
// in-cluster clients do. audit reads the files given; without any, it reads
// the live cluster through the API flags of serve (the same table entries),
// or in-cluster as serve does, and is an error when neither is available.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "command.h"
#include "flag_table.h"
#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

Result<Command> ParseCommandLine(const std::vector<std::string>& args, const EnvLookup& env);

std::string UsageText();

}  // namespace ray_webhook
