// SpecAdmission: KubeRay's spec checks (spec_validation.h) as /validate and
// the audit apply them to one ray.io object.
//
// Contract: pure. The object is read from its own JSON text
// (RayObject::raw_json); an object without one (built in code) has no spec
// findings. Each finding takes the mode of its rule (PolicyConfig::SpecRuleMode):
// off drops it, warn makes it a warning "rule: path: message", enforce
// denies with 422 Invalid, naming up to kMaxSpecFindings findings as
// "path: message (rule)" and how many more; the denial's rule is the one rule
// that denied, or kKubeRaySpecRule when several did. On UPDATE a finding the
// stored object already had does not count: an update is refused only for
// what it adds, so the operator's own updates of an object admitted before
// (finalizers, status-driven edits) never fail on an old finding.
#pragma once

#include <string_view>
#include <vector>

#include "ray_webhook/core/model/decision.h"
#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/core/model/ray_cluster_spec.h"
#include "ray_webhook/core/spec/spec_rule.h"

namespace ray_webhook {

// The denial's rule when findings of several spec rules deny together.
inline constexpr std::string_view kKubeRaySpecRule = "kuberay-spec";
inline constexpr std::size_t kMaxSpecFindings = 5;

// Whether any spec rule can act under policy: false when every mode is off,
// so that the object is not even parsed.
bool SpecChecksOn(const PolicyConfig& policy);

// The findings of the rules that apply to policy.kuberay and whose mode is
// not off, over `object`, less those `old` (the stored object of an UPDATE,
// or null) also has. *unreadable is set when the object's text did not parse.
std::vector<SpecFinding> NewSpecFindings(const RayObject& object, const RayObject* old, const PolicyConfig& policy,
                                         bool* unreadable);

// /validate: the findings of NewSpecFindings into warnings or a denial of
// `decision`; `name` is the object's name for the message.
void AdmitSpec(const RayObject& object, const RayObject* old, std::string_view name, const PolicyConfig& policy,
               Decision& decision);

// The second half of AdmitSpec: findings of an object of `kind` named `name`
// into warnings or a denial, each under its rule's mode.
void DecideSpecFindings(const std::vector<SpecFinding>& findings, RayObjectKind kind, std::string_view name,
                        const PolicyConfig& policy, Decision& decision);

}  // namespace ray_webhook
