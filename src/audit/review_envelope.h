// ReviewEnvelope: an existing object as the AdmissionReview of its CREATE,
// so that the audit reads it with the webhook's own ReviewDecoder.
//
// Contract: pure. Writes request.kind before request.object (the decoder
// reads a ray.io object only after its kind), with the given namespace and
// name, uid "audit" and operation CREATE. Strings that are not UTF-8 are
// written with U+FFFD in their place rather than refused. Never throws.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ray_webhook/core/pod_view.h"

namespace ray_webhook {

std::string ReviewEnvelope(const nlohmann::json& object, const GroupVersionKind& kind, std::string_view namespace_name,
                           std::string_view name);

}  // namespace ray_webhook
