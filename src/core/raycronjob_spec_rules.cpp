// The rows of RayCronJobSpecRules(): ValidateRayCronJobSpec, one SpecRule each.
#include "spec_rules.h"

namespace ray_webhook {

std::span<const SpecRule> RayCronJobSpecRules() { return {}; }

}  // namespace ray_webhook
