#include "ray_webhook/core/spec/spec_admission.h"

#include <algorithm>
#include <string>

#include "parsed_object.h"
#include "ray_webhook/core/model/admission_text.h"
#include "spec_validation.h"
#include "tls_domain_warning.h"

namespace ray_webhook {
namespace {

std::vector<SpecFinding> ActiveFindings(spec_json::Json json, RayObjectKind kind, const PolicyConfig& policy) {
  std::vector<SpecFinding> found = CheckSpec(json, kind, policy.kuberay);
  std::erase_if(found, [&](const SpecFinding& f) { return policy.SpecRuleMode(f.rule) == RuleMode::kOff; });
  return found;
}

// NewSpecFindings over `parsed`, the object's one parse, which the caller
// may read again afterwards (AdmitSpec's TLS-domain warning).
std::vector<SpecFinding> NewFindings(ParsedObject& parsed, const RayObject& object, const RayObject* old,
                                     const PolicyConfig& policy, bool* unreadable) {
  *unreadable = false;
  if (!SpecChecksOn(policy) || object.raw_json.empty()) return {};
  // simdjson's On Demand decoder has accepted the same bytes, so text that
  // does not parse here is a bug, reported as a warning rather than a denial:
  // the webhook must not refuse what it cannot read.
  if (parsed.Unreadable()) {
    *unreadable = true;
    return {};
  }
  std::vector<SpecFinding> now = ActiveFindings(parsed.Root(), object.kind, policy);
  if (old == nullptr || now.empty()) return now;
  ParsedObject old_parsed(*old);
  // A stored object that does not read is as good as none: every finding counts.
  if (!old_parsed.Root()) return now;
  const std::vector<SpecFinding> before = ActiveFindings(old_parsed.Root(), old->kind, policy);
  std::erase_if(now, [&](const SpecFinding& f) { return std::find(before.begin(), before.end(), f) != before.end(); });
  return now;
}

std::string Shown(const SpecFinding& f) { return f.field_path.empty() ? f.message : f.field_path + ": " + f.message; }

}  // namespace

bool SpecChecksOn(const PolicyConfig& policy) {
  if (policy.spec_mode != RuleMode::kOff) return true;
  return std::any_of(policy.spec_rule_modes.begin(), policy.spec_rule_modes.end(),
                     [](const auto& entry) { return entry.second != RuleMode::kOff; });
}

std::vector<SpecFinding> NewSpecFindings(const RayObject& object, const RayObject* old, const PolicyConfig& policy,
                                         bool* unreadable) {
  ParsedObject parsed(object);
  return NewFindings(parsed, object, old, policy, unreadable);
}

void AdmitSpec(const RayObject& object, const RayObject* old, std::string_view name, const PolicyConfig& policy,
               Decision& decision) {
  ParsedObject parsed(object);
  bool unreadable = false;
  const std::vector<SpecFinding> findings = NewFindings(parsed, object, old, policy, &unreadable);
  if (unreadable) {
    decision.warnings.push_back(AdmissionWarning(std::string(kKubeRaySpecRule) +
                                                 ": the object's JSON did not parse, so KubeRay's spec checks "
                                                 "were skipped"));
  }
  DecideSpecFindings(findings, object.kind, name, policy, decision);
  // The same parse as the spec checks' (made here first when every spec rule is off).
  if (decision.allowed && old == nullptr && policy.cluster_domain != "cluster.local") {
    if (const spec_json::Json root = parsed.Root()) {
      if (auto warning = TlsDomainWarning(root, object.kind, policy))
        decision.warnings.push_back(AdmissionWarning(*warning));
    }
  }
}

void DecideSpecFindings(const std::vector<SpecFinding>& findings, RayObjectKind kind, std::string_view name,
                        const PolicyConfig& policy, Decision& decision) {
  std::vector<const SpecFinding*> denying;
  std::size_t warned = 0;
  for (const SpecFinding& f : findings) {
    const RuleMode mode = policy.SpecRuleMode(f.rule);
    if (mode == RuleMode::kEnforce) {
      denying.push_back(&f);
    } else if (mode == RuleMode::kWarn && warned++ < kMaxSpecFindings) {
      // kube-apiserver keeps 4 KiB of warnings a request: the first few say enough.
      decision.warnings.push_back(AdmissionWarning(f.rule + ": " + Shown(f), kMaxFieldWarningRunes));
    }
  }
  if (warned > kMaxSpecFindings) {
    decision.warnings.push_back(AdmissionWarning(std::string(kKubeRaySpecRule) + ": and " +
                                                 std::to_string(warned - kMaxSpecFindings) + " more findings"));
  }
  if (denying.empty()) return;
  const bool one_rule = std::all_of(denying.begin(), denying.end(),
                                    [&](const SpecFinding* f) { return f->rule == denying.front()->rule; });
  std::string message(RayObjectKindName(kind));
  message += ' ';
  message += Quote(name, 63);
  message += ": ";
  const std::size_t shown = std::min(denying.size(), kMaxSpecFindings);
  for (std::size_t k = 0; k < shown; ++k) {
    if (k > 0) message += "; ";
    message += Shown(*denying[k]) + " (" + denying[k]->rule + ")";
  }
  if (denying.size() > shown) message += "; and " + std::to_string(denying.size() - shown) + " more";
  message += ". KubeRay " + ShowKubeRayVersion(policy.kuberay.version) +
             " refuses such a spec when it reconciles the object (an Event, and nothing created), so it is refused "
             "here at once.";
  decision.Deny(
      Denial::Invalid(one_rule ? std::string_view(denying.front()->rule) : kKubeRaySpecRule, std::move(message)));
}

}  // namespace ray_webhook
