#include "ray_webhook/core/spec/spec_rule_ids.h"

#include "spec_validation.h"

namespace ray_webhook {

std::vector<std::string_view> SpecRuleIds() {
  std::vector<std::string_view> ids;
  for (const SpecRule* rule : AllSpecRules()) ids.push_back(rule->id);
  return ids;
}

bool IsSpecRuleId(std::string_view id) { return FindSpecRule(id) != nullptr; }

}  // namespace ray_webhook
