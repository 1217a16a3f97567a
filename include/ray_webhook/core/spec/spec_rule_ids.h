// The ids of KubeRay's spec rules, for the layers outside the core that name
// them (--spec-rule, the chart's specRules.rules) without seeing the rules.
//
// Contract: the ids of every rule of the four tables, in table order; a
// static list, the same for the life of the process.
#pragma once

#include <string_view>
#include <vector>

namespace ray_webhook {

std::vector<std::string_view> SpecRuleIds();
bool IsSpecRuleId(std::string_view id);

}  // namespace ray_webhook
