#include "ray_webhook/core/json/json_writer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace ray_webhook {
namespace {

TEST(JsonWriter, EscapesWhatRfc8259Requires) {
  std::string out;
  JsonWriter(out).String(
      std::string("a\"b\\c\nd\te\x01\x1f"
                  "f\xc3\xa9/",
                  15));
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\nd\\te\\u0001\\u001ff\xc3\xa9/\"");
  EXPECT_EQ(nlohmann::json::parse(out), std::string("a\"b\\c\nd\te\x01\x1f"
                                                    "f\xc3\xa9/",
                                                    15));
}

TEST(JsonWriter, RawAndStringCompose) {
  std::string out;
  JsonWriter(out).Raw("{\"k\":").String("v").Raw("}");
  EXPECT_EQ(nlohmann::json::parse(out), (nlohmann::json{{"k", "v"}}));
}

// Each byte value at each offset of a longer string, so both the 8-byte scan
// and the byte-by-byte tail see it; the result must equal a byte-by-byte
// escape (nlohmann's dump escapes control characters the same way).
TEST(JsonWriter, EveryByteValueAtEveryOffsetOfTheWordScan) {
  for (int value = 1; value < 256; ++value) {
    for (std::size_t at = 0; at < 19; ++at) {
      std::string text(19, 'x');
      text[at] = static_cast<char>(value);
      std::string want = "\"";
      for (char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"')
          want += "\\\"";
        else if (c == '\\')
          want += "\\\\";
        else if (c == '\n')
          want += "\\n";
        else if (c == '\r')
          want += "\\r";
        else if (c == '\t')
          want += "\\t";
        else if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          want += buf;
        } else {
          want += ch;
        }
      }
      want += '"';
      std::string out;
      JsonWriter(out).String(text);
      ASSERT_EQ(out, want) << "byte " << value << " at " << at;
    }
  }
}

TEST(JsonWriter, NoByteAboveTheAsciiRangeIsEscaped) {
  // 0xa2 is '"' + 0x80 and 0xdc is '\\' + 0x80: UTF-8 bytes that a careless
  // word scan would take for a quote or a backslash.
  const std::string text = "\xc2\xa2\xc3\x9c\xe2\x82\xac\xf0\x9f\x98\x80\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9";
  std::string out;
  JsonWriter(out).String(text);
  EXPECT_EQ(out, "\"" + text + "\"");
}

}  // namespace
}  // namespace ray_webhook
