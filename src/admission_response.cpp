#include "ray_webhook/admission_response.h"

#include "ray_webhook/base64.h"

namespace ray_webhook {
namespace {

using nlohmann::json;

// Strings come from a UTF-8-validated parse, but replace rather than throw if
// that ever changes.
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

}  // namespace

std::string EncodePatch(const std::vector<PatchOperation>& patch) {
  json ops = json::array();
  for (const PatchOperation& p : patch) {
    json op{{"op", p.op}, {"path", p.path}};
    if (p.op != "remove") op["value"] = p.value;
    ops.push_back(std::move(op));
  }
  return Dump(ops);
}

std::string EncodeAdmissionResponse(const AdmissionRequest& request, const Decision& decision) {
  json response{{"uid", request.uid}, {"allowed", decision.allowed}};
  if (!decision.allowed) {
    response["status"] = json{{"status", "Failure"},
                              {"code", decision.denial.code},
                              {"reason", decision.denial.reason},
                              {"message", decision.denial.message}};
  } else if (!decision.patch.empty()) {
    response["patchType"] = "JSONPatch";
    response["patch"] = Base64Encode(EncodePatch(decision.patch));
  }
  if (!decision.warnings.empty()) response["warnings"] = decision.warnings;
  return Dump(json{{"apiVersion", ApiVersionString(request.version)},
                   {"kind", "AdmissionReview"},
                   {"response", std::move(response)}});
}

std::string EncodeErrorStatus(int http_code, std::string_view reason, std::string_view message) {
  return Dump(json{{"apiVersion", "v1"},
                   {"kind", "Status"},
                   {"status", "Failure"},
                   {"code", http_code},
                   {"reason", reason},
                   {"message", message}});
}

}  // namespace ray_webhook
