#include "ray_webhook/core/model/admission_request.h"

namespace ray_webhook {

std::string_view ApiVersionString(ReviewVersion version) {
  return version == ReviewVersion::kV1beta1 ? "admission.k8s.io/v1beta1" : "admission.k8s.io/v1";
}

std::optional<std::string_view> Lookup(const StringMap& map, std::string_view key) {
  for (const auto& [k, v] : map) {
    if (k == key) return v;
  }
  return std::nullopt;
}

}  // namespace ray_webhook
