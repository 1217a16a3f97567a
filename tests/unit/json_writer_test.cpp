#include "ray_webhook/json_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ray_webhook {
namespace {

TEST(JsonWriter, EscapesWhatRfc8259Requires) {
  std::string out;
  JsonWriter(out).String(std::string("a\"b\\c\nd\te\x01\x1f" "f\xc3\xa9/", 15));
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\nd\\te\\u0001\\u001ff\xc3\xa9/\"");
  EXPECT_EQ(nlohmann::json::parse(out), std::string("a\"b\\c\nd\te\x01\x1f" "f\xc3\xa9/", 15));
}

TEST(JsonWriter, RawAndStringCompose) {
  std::string out;
  JsonWriter(out).Raw("{\"k\":").String("v").Raw("}");
  EXPECT_EQ(nlohmann::json::parse(out), (nlohmann::json{{"k", "v"}}));
}

}  // namespace
}  // namespace ray_webhook
