// PolicyConfig: everything the review core is configured with.
//
// Contract: plain data, built once by the command line and passed down by
// const reference inside the server's configuration (ServerConfig::policy).
// The core reads nothing else: no ports, threads or timeouts.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/kuberay_target.h"

namespace ray_webhook {

// How a rule acts on its finding: deny, allow with a warning (to roll a
// webhook out safely), or not at all. Only PodPolicy applies it.
enum class RuleMode { kEnforce, kWarn, kOff };

// Which head-uniqueness mechanisms run: the deterministic head name (mutate
// plus the validating name rule), the second-head lookup, both, or neither.
struct HeadUniqueness {
  bool name = true;
  bool lookup = true;
};

struct PolicyConfig {
  // KubeRay's operator reads CLUSTER_DOMAIN with this default (PR #951).
  std::string cluster_domain = "cluster.local";
  HeadUniqueness head_uniqueness;
  RuleMode head_name_mode = RuleMode::kEnforce;
  RuleMode second_head_mode = RuleMode::kEnforce;
  RuleMode duplicate_mount_mode = RuleMode::kEnforce;
  // When the API cannot answer the second-head lookup: allow with a warning
  // (false) or deny (true).
  bool deny_on_lookup_failure = false;
  // KubeRay's own spec checks (spec_validation.h): the operator they are the
  // checks of, the mode of the whole family, and the rules set apart from it
  // by id (--spec-rule ID=MODE), which the command line has checked are ids.
  KubeRayTarget kuberay;
  RuleMode spec_mode = RuleMode::kEnforce;
  std::map<std::string, RuleMode, std::less<>> spec_rule_modes;

  // The mode of the spec rule `id`: its own when set, else the family's.
  RuleMode SpecRuleMode(std::string_view id) const {
    const auto it = spec_rule_modes.find(id);
    return it == spec_rule_modes.end() ? spec_mode : it->second;
  }
};

}  // namespace ray_webhook
