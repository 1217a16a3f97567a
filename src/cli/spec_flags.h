// SpecFlags: the values of the flags that configure KubeRay's spec checks
// (--kuberay-version, --kuberay-feature-gates, --spec-rule-mode,
// --spec-rule), parsed into PolicyConfig.
//
// Contract: each parser sets its part of the policy or leaves it untouched
// and says, in one line naming the flag, what is wrong with the value.
// --spec-rule names a rule by its id; an id no table has is an error that
// points at the list of ids (docs/rules.md). `serve`, `audit` and `review`
// share these flags (SpecSharedFlags), so a policy reads the same everywhere.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

// "X.Y.Z", or (when follow is given: serve) "auto" or "auto:X.Y.Z": *follow
// is set, and X.Y.Z (default: the built-in release) is the fixed release
// used when the operator's Deployment cannot tell (ChooseKubeRayRelease).
Status KubeRayVersionFlag(std::string_view value, PolicyConfig& policy, bool* follow = nullptr);
Status KubeRayFeatureGatesFlag(std::string_view value, PolicyConfig& policy);
Status SpecRuleModeFlag(std::string_view value, PolicyConfig& policy);
// "ID=MODE"; repeated, the last mode given for an id wins.
Status SpecRuleFlag(std::string_view value, PolicyConfig& policy);

// "enforce", "warn" or "off"; false for anything else.
bool ParseRuleMode(std::string_view text, RuleMode* out);

// The four flags' names, in the order the usage lists them.
std::span<const std::string_view> SpecSharedFlags();

}  // namespace ray_webhook
