#include "ray_webhook/core/json/json_parser.h"

#include <gtest/gtest.h>

#include <string>

#include "ray_webhook/core/decode/review_decoder.h"

namespace ray_webhook {
namespace {

JsonParser::Root Open(JsonParser& parser, const std::string& body, simdjson::error_code* e) {
  od::document doc;
  od::object root;
  return parser.Open(body, 0, &doc, &root, e);
}

TEST(JsonParser, TellsEmptyNonObjectAndInvalidRootsApart) {
  JsonParser parser(0);
  simdjson::error_code e = simdjson::SUCCESS;
  for (const std::string body : {"", " \t\r\n"}) EXPECT_EQ(Open(parser, body, &e), JsonParser::Root::kEmpty);
  // Valid JSON but no object, and a bare word that only starts like a literal.
  for (const std::string body : {"12", "\"x\"", "true", "null", "[]"}) {
    SCOPED_TRACE(body);
    EXPECT_EQ(Open(parser, body, &e), JsonParser::Root::kNotObject);
  }
  for (const std::string body : {"tru", "nul", "-", "{"}) {
    SCOPED_TRACE(body);
    e = simdjson::SUCCESS;
    EXPECT_EQ(Open(parser, body, &e), JsonParser::Root::kInvalidJson);
    EXPECT_NE(e, simdjson::SUCCESS);
  }
  EXPECT_EQ(Open(parser, "{}", &e), JsonParser::Root::kObject);
}

// Whatever follows the root is invalid JSON, as for Go's decoder; whitespace
// is not. Content that does not end like the root fails already at Open().
TEST(JsonParser, CheckEndTellsTrailingContent) {
  JsonParser parser(0);
  auto walked = [&](const std::string& body, JsonParser::Root* root_found) {
    od::document doc;
    od::object root;
    simdjson::error_code e = simdjson::SUCCESS;
    *root_found = parser.Open(body, 0, &doc, &root, &e);
    if (*root_found != JsonParser::Root::kObject) return e;
    JsonReader r;
    r.Fields(root, [](std::string_view, od::value) {});  // the walk
    return r.failed() ? r.json_error() : parser.CheckEnd(doc);
  };
  JsonParser::Root root;
  EXPECT_EQ(walked(R"({"a":1} )"
                   "\n",
                   &root),
            simdjson::SUCCESS);
  EXPECT_EQ(walked(R"({"a":1} {})", &root), simdjson::TRAILING_CONTENT);
  EXPECT_EQ(root, JsonParser::Root::kObject);
  for (const std::string body : {R"({"a":1} 1)", R"({"a":1},)", R"({"a":1} x)"}) {
    SCOPED_TRACE(body);
    EXPECT_NE(walked(body, &root), simdjson::SUCCESS);
  }
}

// With enough readable padding the body is read where it lies: no copy, so
// the parser's copy buffer does not grow for it.
TEST(JsonParser, ABodyWithPaddingIsReadInPlace) {
  const std::string body = R"({"key":"value"})" + std::string(1000, ' ');
  std::string padded = body;
  padded.reserve(body.size() + simdjson::SIMDJSON_PADDING);
  JsonParser in_place(0), copied(0);
  od::document doc;
  od::object root;
  simdjson::error_code e = simdjson::SUCCESS;
  ASSERT_EQ(in_place.Open(padded, padded.capacity() - padded.size(), &doc, &root, &e), JsonParser::Root::kObject);
  std::string_view raw;
  ASSERT_EQ(doc.raw_json().get(raw), simdjson::SUCCESS);
  EXPECT_EQ(raw.data(), padded.data());
  ASSERT_EQ(copied.Open(body, 0, &doc, &root, &e), JsonParser::Root::kObject);
  ASSERT_EQ(doc.raw_json().get(raw), simdjson::SUCCESS);
  EXPECT_NE(raw.data(), body.data());
  EXPECT_GE(copied.capacity(), body.size());
}

TEST(JsonParser, StartsWithTheCapacityItIsGiven) {
  EXPECT_EQ(JsonParser(ReviewDecoder::kDefaultCapacity).capacity(), ReviewDecoder::kDefaultCapacity);
}

}  // namespace
}  // namespace ray_webhook
