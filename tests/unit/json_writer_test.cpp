#include "ray_webhook/json_writer.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

std::string Written(const nlohmann::json& v) {
  std::string out;
  JsonWriter(out).Value(v);
  return out;
}

TEST(JsonWriter, EscapesWhatRfc8259Requires) {
  std::string out;
  JsonWriter(out).String(std::string("a\"b\\c\nd\te\x01\x1f" "f\xc3\xa9/", 15));
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\nd\\te\\u0001\\u001ff\xc3\xa9/\"");
  EXPECT_EQ(nlohmann::json::parse(out), std::string("a\"b\\c\nd\te\x01\x1f" "f\xc3\xa9/", 15));
}

TEST(JsonWriter, ValuesRoundTripThroughAParser) {
  const nlohmann::json v = {{"name", "FQ_RAY_IP"}, {"value", "x.y.svc"}, {"n", 3}, {"b", true}, {"z", nullptr},
                            {"list", {1, "two", {{"k", "v"}}}}};
  EXPECT_EQ(nlohmann::json::parse(Written(v)), v);
  EXPECT_EQ(Written("plain"), "\"plain\"");
  EXPECT_EQ(Written(nlohmann::json::array()), "[]");
}

}  // namespace
}  // namespace ray_webhook
