#include "ray_webhook/core/model/decision.h"

#include "ray_webhook/core/model/admission_text.h"

namespace ray_webhook {

std::string_view MutationName(Mutation mutation) {
  switch (mutation) {
    case Mutation::kFqRayIpAdded: return "fq_ray_ip_added";
    case Mutation::kRayIpAdded: return "ray_ip_added";
    case Mutation::kAddressRewritten: return "address_rewritten";
    case Mutation::kRayAddressRewritten: return "ray_address_rewritten";
    case Mutation::kHeadNamed: return "head_named";
    case Mutation::kGeneratedStartCommandRewritten: return "generated_start_command_rewritten";
  }
  return "unknown";
}

void Decision::Apply(RuleMode mode, Denial d) {
  switch (mode) {
    case RuleMode::kEnforce: Deny(std::move(d)); break;
    case RuleMode::kWarn: warnings.push_back(AdmissionWarning(d.rule + " (warn mode): " + d.message)); break;
    case RuleMode::kOff: break;
  }
}

}  // namespace ray_webhook
