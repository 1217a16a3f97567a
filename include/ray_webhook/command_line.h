// CommandLine: argv and environment -> what to run, with a complete Config.
//
// Contract: pure; reads only what it is given (the environment comes in as a
// lookup function). Every error is one line for the user, and the caller exits
// 2 on it. Accepted forms:
//   ray-webhook serve --bind ADDR --port N --tls-cert FILE --tls-key FILE
//                     [--cluster-domain DOMAIN] [--threads N] [--log-level LEVEL]
//                     [head-uniqueness, rule-mode and Kubernetes API flags; see UsageText()]
//   ray-webhook review (--mutate|--validate) [FILE|-]
//   ray-webhook --help | --version
// Flags take "--flag value" or "--flag=value". CLUSTER_DOMAIN in the
// environment is honoured as KubeRay's operator honours it; the flag wins.
// KUBERNETES_SERVICE_HOST/PORT configure the API as in-cluster clients do.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ray_webhook/config.h"
#include "ray_webhook/pod_policy.h"

namespace ray_webhook {

enum class CommandKind { kServe, kReview, kHelp, kVersion };

struct Command {
  CommandKind kind = CommandKind::kHelp;
  Config config;
  Endpoint endpoint = Endpoint::kMutate;  // review only
  std::string input = "-";                // review only: a file, or "-" for stdin
};

struct ParseResult {
  std::optional<Command> command;
  std::string error;
};

using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

ParseResult ParseCommandLine(const std::vector<std::string>& args, const EnvLookup& env);

std::string UsageText();

}  // namespace ray_webhook
