#include "ray_webhook/core/decode/object_decoder.h"

#include <string>

#include "pod_decoder.h"
#include "ray_object_decoder.h"
#include "ray_webhook/core/json/json_parser.h"

namespace ray_webhook {

struct ObjectDecoder::Impl {
  // Objects come one at a time, and rarely: the buffers grow to the largest.
  JsonParser parser{0};

  // Opens json, runs decode(object, reader) over its root and checks that
  // nothing follows it.
  template <typename Decode>
  Status Run(std::string_view json, std::size_t readable_padding, Decode&& decode) {
    od::document doc;
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
  return impl_->Run(json, readable_padding,
                    [&](od::object root, JsonReader& r) { ray_webhook::DecodePod(root, r, out); });
}

Status ObjectDecoder::DecodeRayObject(std::string_view json, RayObjectKind kind, RayObject& out,
                                      std::size_t readable_padding) {
  Status status = impl_->Run(json, readable_padding,
                             [&](od::object root, JsonReader& r) { ray_webhook::DecodeRayObject(root, r, kind, out); });
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
