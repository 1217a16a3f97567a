#include "ray_webhook/core/review/admission_response.h"

#include "ray_webhook/core/json/base64.h"
#include "ray_webhook/core/json/json_writer.h"
#include "ray_webhook/core/json/utf8_text.h"

namespace ray_webhook {
namespace {

void WriteEnvEntry(JsonWriter& w, const EnvEntry& e) {
  w.Raw("{\"name\":").String(e.name).Raw(",\"value\":").String(e.value).Raw("}");
}

void WritePatchValue(JsonWriter& w, const PatchValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) {
    w.String(*s);
  } else if (const auto* e = std::get_if<EnvEntry>(&value)) {
    WriteEnvEntry(w, *e);
  } else if (const auto* list = std::get_if<std::vector<EnvEntry>>(&value)) {
    w.Raw("[");
    for (std::size_t i = 0; i < list->size(); ++i) {
      if (i > 0) w.Raw(",");
      WriteEnvEntry(w, (*list)[i]);
    }
    w.Raw("]");
  } else {
    w.Raw("null");
  }
}

}  // namespace

void AppendPatch(const std::vector<PatchOperation>& patch, std::string& out) {
  JsonWriter w(out);
  w.Raw("[");
  for (std::size_t i = 0; i < patch.size(); ++i) {
    const PatchOperation& p = patch[i];
    w.Raw(i == 0 ? "{\"op\":" : ",{\"op\":").String(p.op).Raw(",\"path\":").String(p.path);
    if (p.op != "remove") {
      w.Raw(",\"value\":");
      WritePatchValue(w, p.value);
    }
    w.Raw("}");
  }
  w.Raw("]");
}

// Written by hand rather than through a JSON tree: this runs on every request,
// and building then serialising a tree cost more than the rest of the review.
std::string EncodeAdmissionResponse(const AdmissionRequest& request, const Decision& decision) {
  // Sized once for the common answer: strings that need escaping may still
  // grow it. A patch takes about 200 bytes per operation, a third more in base64.
  std::size_t size = 160 + request.uid.size() + decision.patch.size() * 280;
  if (!decision.allowed) size += decision.denial.reason.size() + decision.denial.message.size() + 64;
  for (const std::string& warning : decision.warnings) size += warning.size() + 3;
  std::string out;
  out.reserve(size);
  JsonWriter w(out);
  w.Raw("{\"apiVersion\":").String(ApiVersionString(request.version));
  w.Raw(",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":").String(request.uid);
  w.Raw(decision.allowed ? ",\"allowed\":true" : ",\"allowed\":false");
  if (!decision.allowed) {
    w.Raw(",\"status\":{\"status\":\"Failure\",\"code\":").Raw(std::to_string(decision.denial.code));
    w.Raw(",\"reason\":").String(decision.denial.reason).Raw(",\"message\":").String(decision.denial.message).Raw("}");
  } else if (!decision.patch.empty()) {
    // The patch is written where its base64 goes, then encoded in place;
    // base64 has no characters that need escaping.
    w.Raw(",\"patchType\":\"JSONPatch\",\"patch\":\"");
    const std::size_t patch_start = out.size();
    AppendPatch(decision.patch, out);
    EncodeBase64Tail(out, patch_start);
    w.Raw("\"");
  }
  if (!decision.warnings.empty()) {
    w.Raw(",\"warnings\":[");
    for (std::size_t i = 0; i < decision.warnings.size(); ++i) {
      if (i > 0) w.Raw(",");
      w.String(decision.warnings[i]);
    }
    w.Raw("]");
  }
  w.Raw("}}");
  return out;
}

std::string EncodeErrorStatus(int http_code, std::string_view reason, std::string_view message) {
  // The keys in the order the Status has always been written in (sorted). The
  // message may quote bytes of a body that did not read, so it is made valid
  // UTF-8 first (U+FFFD for what is not).
  std::string out;
  out.reserve(96 + reason.size() + message.size());
  JsonWriter w(out);
  w.Raw("{\"apiVersion\":\"v1\",\"code\":").Raw(std::to_string(http_code));
  w.Raw(",\"kind\":\"Status\",\"message\":").String(Utf8Text(message));
  w.Raw(",\"reason\":").String(Utf8Text(reason)).Raw(",\"status\":\"Failure\"}");
  return out;
}

}  // namespace ray_webhook
