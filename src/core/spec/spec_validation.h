// SpecValidation: which of KubeRay's spec checks the target operator runs,
// and what they find in one stored ray.io object.
//
// Contract: pure. A rule applies when the target's version is in the rule's
// [since, until) and its feature gate is in the state the rule needs. The
// kind's own table reads the whole object; the RayCluster table reads the
// cluster spec the object carries (at ClusterSpecPath), and is skipped when
// it carries none (a RayJob on an existing cluster). Findings come in table
// order, the RayCluster table first, as KubeRay's validation.go reports them.
#pragma once

#include <string_view>
#include <vector>

#include "ray_webhook/core/spec/spec_rule.h"
#include "spec_json.h"

namespace ray_webhook {

bool SpecRuleApplies(const SpecRule& rule, const KubeRayTarget& target);

// Every rule of the four tables, RayCluster's first; the rule named `id`, or null.
std::vector<const SpecRule*> AllSpecRules();
const SpecRule* FindSpecRule(std::string_view id);

// The findings of every rule that applies to `target` over `object`, the
// object's parsed JSON.
std::vector<SpecFinding> CheckSpec(spec_json::Json object, RayObjectKind kind, const KubeRayTarget& target);

// The findings of one rule over `object`, applying or not (for its tests).
std::vector<SpecFinding> CheckSpecRule(const SpecRule& rule, spec_json::Json object, RayObjectKind kind,
                                       const KubeRayTarget& target);

}  // namespace ray_webhook
