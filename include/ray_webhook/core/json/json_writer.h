// JsonWriter: appends compact JSON to a string, for the answers on the hot path.
//
// Contract: String() escapes quotes, backslashes and control characters as
// RFC 8259 requires and copies everything else as is, so valid UTF-8 in means
// valid JSON out (every string the core writes comes from a UTF-8-validated
// parse or from the core itself). No allocation beyond the output string's
// own growth.
#pragma once

#include <string>
#include <string_view>

namespace ray_webhook {

class JsonWriter {
 public:
  explicit JsonWriter(std::string& out) : out_(out) {}

  JsonWriter& Raw(std::string_view text) {
    out_.append(text);
    return *this;
  }
  JsonWriter& String(std::string_view text);

 private:
  std::string& out_;
};

}  // namespace ray_webhook
