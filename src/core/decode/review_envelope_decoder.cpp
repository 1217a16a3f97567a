#include "review_envelope_decoder.h"

#include <optional>
#include <string>
#include <utility>

#include "pod_decoder.h"
#include "ray_object_decoder.h"

namespace ray_webhook {
namespace {

using simdjson::error_code;
using simdjson::SUCCESS;

bool IsCorePod(const GroupVersionKind& kind) {
  return kind.group.empty() && kind.version == "v1" && kind.kind == "Pod";
}

// [start, end) trimmed back to its last '}': what lies between an object and
// the next token is whitespace only. Empty when that is not what is there.
std::string_view ObjectText(const char* start, const char* end) {
  if (start == nullptr || end == nullptr || end <= start || *start != '{') return {};
  std::string_view text(start, static_cast<std::size_t>(end - start));
  const std::size_t close = text.find_last_of('}');
  return close == std::string_view::npos ? std::string_view() : text.substr(0, close + 1);
}

std::string InvalidJson(error_code e) {
  return std::string("request body is not valid JSON: ") + simdjson::error_message(e);
}

// One walk of one review, and what it found. Each part keeps its own reader,
// since what counts depends on what comes later in the document.
class EnvelopeWalk {
 public:
  EnvelopeWalk(AdmissionRequest& req, Pod& spare_pod) : req_(req), spare_pod_(spare_pod) {}

  void Review(od::object review) {
    r_.Fields(review, [&](std::string_view key, od::value v) {
      if (key == "apiVersion") {
        header_.String(v, "apiVersion", &api_version_);
      } else if (key == "kind") {
        header_.String(v, "kind", &kind_);
      } else if (key == "request") {
        od::object request;
        has_request_ = r_.Object(v, "request", &request);
        if (has_request_) ReadRequest(request);
      }
    });
    if (r_.json_error() == SUCCESS && header_.json_error() != SUCCESS) r_.Adopt(header_);
  }

  // Content after the review is invalid JSON (Go's decoder refuses it too).
  void CheckEnd(const JsonParser& parser, od::document& doc) {
    if (!r_.failed()) r_.Ok(parser.CheckEnd(doc));
  }

  Status Verdict() {
    if (r_.json_error() != SUCCESS) return Status::Error(InvalidJson(r_.json_error()));
    if (header_.failed()) return Status::Error("apiVersion and kind must be strings");
    if (api_version_ == "admission.k8s.io/v1") {
      req_.version = ReviewVersion::kV1;
    } else if (api_version_ == "admission.k8s.io/v1beta1") {
      req_.version = ReviewVersion::kV1beta1;
    } else {
      return Status::Error("unsupported apiVersion \"" + std::string(api_version_.substr(0, 64)) +
                           "\"; expected admission.k8s.io/v1 or admission.k8s.io/v1beta1");
    }
    if (kind_ != "AdmissionReview") {
      return Status::Error("unsupported kind \"" + std::string(kind_.substr(0, 64)) + "\"; expected AdmissionReview");
    }
    if (!has_request_) return Status::Error("AdmissionReview has no request object");
    if (!r_.failed() && req_.uid.empty()) r_.Fail("request.uid", "missing; the answer must echo it");
    if (IsCorePod(req_.kind)) {
      r_.Adopt(pod_);
    } else {
      ParkPod();
    }
    if (RayObjectKindOf(req_.kind)) {
      // One pass, front to back: an object read before its kind was known was
      // read as a Pod, and cannot be read again. kube-apiserver always sends
      // the kind first.
      if (object_before_kind_ && !r_.failed()) {
        r_.Fail("request.object", "a ray.io object must come after request.kind in the review");
      }
      r_.Adopt(ray_);
    }
    return r_.failed() ? Status::Error(r_.error()) : Status::Ok();
  }

  // Sets the request's Pod aside, moving its lists' storage (freeing nothing),
  // for the next Pod decoded to refill.
  void ParkPod() {
    if (!req_.pod) return;
    spare_pod_ = std::move(*req_.pod);
    req_.pod.reset();
  }

 private:
  void ReadRequest(od::object request) {
    r_.Fields(request, [&](std::string_view k, od::value f) {
      if (k == "uid") {
        r_.String(f, "request.uid", &req_.uid);
      } else if (k == "kind") {
        ReadKind(f);
      } else if (k == "operation") {
        r_.String(f, "request.operation", &req_.operation);
      } else if (k == "namespace") {
        r_.String(f, "request.namespace", &req_.namespace_name);
      } else if (k == "name") {
        r_.String(f, "request.name", &req_.name);
      } else if (k == "object" || k == "oldObject") {
        if (const auto ray_kind = RayObjectKindOf(req_.kind)) {
          ReadRayObject(f, *ray_kind, k == "oldObject");
        } else if (k == "object") {
          ReadPod(f);  // the old Pod is never read
        }
      }
    });
  }

  void ReadKind(od::value f) {
    od::object gvk;
    if (!r_.Object(f, "request.kind", &gvk)) return;
    r_.Fields(gvk, [&](std::string_view part, od::value g) {
      if (part == "group") {
        r_.String(g, "request.kind.group", &req_.kind.group);
      } else if (part == "version") {
        r_.String(g, "request.kind.version", &req_.kind.version);
      } else if (part == "kind") {
        r_.String(g, "request.kind.kind", &req_.kind.kind);
      }
    });
  }

  void ReadRayObject(od::value f, RayObjectKind kind, bool old_object) {
    std::optional<RayObject>& out = old_object ? req_.old_ray_object : req_.ray_object;
    out.reset();
    JsonReader reader;
    od::object obj;
    // By position, so that the object is walked once: its first token is its
    // '{', and once the decoder has read every field the iterator stands on
    // the token after its '}'. Only ray.io objects come here.
    const char* start = f.raw_json_token().data();
    if (reader.Object(f, old_object ? "request.oldObject" : "request.object", &obj)) {
      DecodeRayObject(obj, reader, kind, out.emplace());
      reader.Prefix(old_object ? "request.oldObject." : "request.object.");
      const char* end = nullptr;
      if (!reader.failed() && f.current_location().get(end) == SUCCESS) out->raw_json = ObjectText(start, end);
    }
    if (reader.json_error() != SUCCESS) {
      r_.Adopt(reader);  // invalid JSON ends the walk
    } else if (old_object) {
      // The stored object is only compared with; one that does not read is as good as none.
      if (reader.failed()) out.reset();
    } else {
      ray_ = std::move(reader);
      object_before_kind_ = false;
    }
  }

  // The object is skipped unread once the kind is known not to be a Pod.
  void ReadPod(od::value f) {
    if (!req_.kind.kind.empty() && !IsCorePod(req_.kind)) return;
    od::object obj;
    pod_ = JsonReader();
    ParkPod();
    if (!pod_.Object(f, "request.object", &obj)) return;
    object_before_kind_ = req_.kind.kind.empty();
    req_.pod.emplace(std::move(spare_pod_));
    DecodePod(obj, pod_, *req_.pod);
    pod_.Prefix("request.object.");
    // Invalid JSON ends the walk; a type error in a Pod may not count.
    if (pod_.json_error() != SUCCESS) r_.Adopt(pod_);
  }

  AdmissionRequest& req_;
  Pod& spare_pod_;
  std::string_view api_version_, kind_;
  bool has_request_ = false;
  bool object_before_kind_ = false;
  JsonReader header_;  // apiVersion and kind
  JsonReader r_;       // the request
  JsonReader pod_;     // the Pod, which counts only when request.kind says Pod
  JsonReader ray_;     // a ray.io object, read only once request.kind names one
};

}  // namespace

Status DecodeReviewEnvelope(JsonParser& parser, std::string_view body, std::size_t readable_padding,
                            AdmissionRequest& req, Pod& spare_pod) {
  od::document doc;
  od::object review;
  error_code e = SUCCESS;
  switch (parser.Open(body, readable_padding, &doc, &review, &e)) {
    case JsonParser::Root::kObject: break;
    case JsonParser::Root::kEmpty: return Status::Error("request body is empty; expected an AdmissionReview");
    case JsonParser::Root::kNotObject:
      return Status::Error("request body is not a JSON object; expected an AdmissionReview");
    case JsonParser::Root::kInvalidJson: return Status::Error(InvalidJson(e));
  }
  EnvelopeWalk walk(req, spare_pod);
  walk.ParkPod();
  req.ray_object.reset();
  req.old_ray_object.reset();
  req.version = ReviewVersion::kV1;
  req.uid = req.operation = req.namespace_name = req.name = {};
  req.kind = {};
  walk.Review(review);
  walk.CheckEnd(parser, doc);
  return walk.Verdict();
}

}  // namespace ray_webhook
