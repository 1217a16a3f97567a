#include "review_envelope.h"

namespace ray_webhook {
namespace {

std::string Dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

std::string ReviewEnvelope(const nlohmann::json& object, const GroupVersionKind& kind, std::string_view namespace_name,
                           std::string_view name) {
  const nlohmann::json gvk = {
      {"group", std::string(kind.group)}, {"version", std::string(kind.version)}, {"kind", std::string(kind.kind)}};
  std::string body = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"audit","kind":)";
  body += Dump(gvk);
  body += R"(,"operation":"CREATE","namespace":)";
  body += Dump(std::string(namespace_name));
  body += R"(,"name":)";
  body += Dump(std::string(name));
  body += R"(,"object":)";
  body += Dump(object);
  body += "}}";
  return body;
}

}  // namespace ray_webhook
