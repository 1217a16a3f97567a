#include "ray_webhook/core/decode/object_decoder.h"

#include <string>

#include "pod_decoder.h"
#include "ray_object_decoder.h"
#include "ray_webhook/core/json/json_parser.h"
#include "worker_spec_signature.h"

namespace ray_webhook {

struct ObjectDecoder::Impl {
  // Objects come one at a time, and rarely: the buffers grow to the largest.
  JsonParser parser{0};
  // The document decoded last, kept so that WorkerSpecSignature reads it again without a second parse.
  od::document doc;
  bool pod_decoded = false;

  // Opens json, runs decode(object, reader) over its root and checks that
  // nothing follows it.
  template <typename Decode>
  Status Run(std::string_view json, std::size_t readable_padding, Decode&& decode) {
    pod_decoded = false;
    od::object root;
    simdjson::error_code e = simdjson::SUCCESS;
    switch (parser.Open(json, readable_padding, &doc, &root, &e)) {
      case JsonParser::Root::kObject: break;
      case JsonParser::Root::kEmpty: return Status::Error("empty; expected a JSON object");
      case JsonParser::Root::kNotObject: return Status::Error("not a JSON object");
      case JsonParser::Root::kInvalidJson: return InvalidJson(e);
    }
    JsonReader r;
    decode(root, r);
    if (!r.failed()) r.Ok(parser.CheckEnd(doc));
    if (r.json_error() != simdjson::SUCCESS) return InvalidJson(r.json_error());
    return r.failed() ? Status::Error(r.error()) : Status::Ok();
  }

  static Status InvalidJson(simdjson::error_code e) {
    return Status::Error(std::string("not valid JSON: ") + simdjson::error_message(e));
  }
};

ObjectDecoder::ObjectDecoder() : impl_(std::make_unique<Impl>()) {}
ObjectDecoder::~ObjectDecoder() = default;

Status ObjectDecoder::DecodePod(std::string_view json, Pod& out, std::size_t readable_padding) {
  Status status =
      impl_->Run(json, readable_padding, [&](od::object root, JsonReader& r) { ray_webhook::DecodePod(root, r, out); });
  impl_->pod_decoded = status.ok();
  return status;
}

Status ObjectDecoder::WorkerSpecSignature(std::string& out) {
  if (!impl_->pod_decoded) return Status::Error("no Pod decoded");
  // Back to the document's first token: the tokens found by the one parse are walked again, and the
  // signature reads raw tokens only, so the Pod's views stay as they are.
  impl_->doc.rewind();
  od::object root;
  JsonReader r;
  if (r.Ok(impl_->doc.get_object().get(root))) WriteWorkerSpecSignature(root, r, out);
  if (r.json_error() != simdjson::SUCCESS) return Impl::InvalidJson(r.json_error());
  return r.failed() ? Status::Error(r.error()) : Status::Ok();
}

Status ObjectDecoder::DecodeRayObject(std::string_view json, RayObjectKind kind, RayObject& out,
                                      std::size_t readable_padding) {
  Status status = impl_->Run(json, readable_padding, [&](od::object root, JsonReader& r) {
    // The audit counts what a cluster holds by its templates' resources.
    ray_webhook::DecodeRayObject(root, r, kind, out, /*read_resources=*/true);
  });
  // The document is the object: its text is json without the whitespace around it.
  if (status.ok()) {
    const std::size_t open = json.find('{');
    const std::size_t close = json.find_last_of('}');
    if (open != std::string_view::npos && close != std::string_view::npos && open < close)
      out.raw_json = json.substr(open, close - open + 1);
  }
  return status;
}

}  // namespace ray_webhook
