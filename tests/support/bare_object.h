// BareObject: runs one of the core's internal object decoders over a JSON
// text whose root is the object, as the decoders' callers do, for tests of
// the decoders one by one.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ray_webhook/core/json/json_parser.h"
#include "ray_webhook/core/json/json_reader.h"
#include "support/fixture_files.h"

namespace ray_webhook::testing {

// request.<field> of the review in tests/fixtures/<relative>, as the bare object.
inline nlohmann::json ReviewObject(const std::string& relative, const char* field = "object") {
  return nlohmann::json::parse(ReadFixture(relative))["request"][field];
}

class BareObject {
 public:
  // Calls decode(root, reader) and returns the reader, its error path
  // relative to the root. The views decoded stay valid until the next Walk.
  template <typename Decode>
  JsonReader Walk(std::string_view json, Decode&& decode) {
    text_ = json;
    JsonReader r;
    od::document doc;
    od::object root;
    simdjson::error_code e = simdjson::SUCCESS;
    if (parser_.Open(text_, 0, &doc, &root, &e) != JsonParser::Root::kObject) {
      r.Ok(e == simdjson::SUCCESS ? simdjson::INCORRECT_TYPE : e);
      return r;
    }
    decode(root, r);
    return r;
  }

 private:
  JsonParser parser_{0};
  std::string text_;
};

}  // namespace ray_webhook::testing
