#include "core/decode/object_meta_decoder.h"

#include <gtest/gtest.h>

#include "support/bare_object.h"

namespace ray_webhook {
namespace {

using testing::BareObject;

JsonReader Meta(BareObject& bare, const std::string& json, ObjectMeta* meta) {
  return bare.Walk(json, [&](od::object root, JsonReader& r) {
    r.Fields(root, [&](std::string_view key, od::value v) {
      if (key == "metadata") DecodeObjectMeta(v, r, *meta);
    });
  });
}

TEST(ObjectMetaDecoder, ReadsNamesLabelsAndAnnotations) {
  BareObject bare;
  ObjectMeta meta;
  ASSERT_FALSE(Meta(bare,
                    R"({"metadata":{"name":"n","generateName":"g-","namespace":"ns","uid":"u",)"
                    R"("labels":{"a":"1","b":"2"},"annotations":{"c":"3"}}})",
                    &meta)
                   .failed());
  EXPECT_EQ(meta.name, "n");
  EXPECT_EQ(meta.generate_name, "g-");
  EXPECT_EQ(meta.namespace_name, "ns");
  EXPECT_EQ(meta.labels.size(), 2u);
  EXPECT_EQ(Lookup(meta.labels, "b"), "2");
  EXPECT_EQ(Lookup(meta.annotations, "c"), "3");
}

// As Go's encoding/json for a struct: a repeated metadata adds to the first;
// a repeated field within it counts with its last value.
TEST(ObjectMetaDecoder, ARepeatedMetadataAddsToTheFirst) {
  BareObject bare;
  ObjectMeta meta;
  ASSERT_FALSE(
      Meta(bare, R"({"metadata":{"name":"n","labels":{"a":"1"}},"metadata":{"labels":{"b":"2"}}})", &meta).failed());
  EXPECT_EQ(meta.name, "n");
  EXPECT_EQ(Lookup(meta.labels, "a"), std::nullopt);
  EXPECT_EQ(Lookup(meta.labels, "b"), "2");
}

TEST(ObjectMetaDecoder, ErrorsAreRelativeToTheObject) {
  BareObject bare;
  ObjectMeta meta;
  EXPECT_EQ(Meta(bare, R"({"metadata":{"labels":{"a":1}}})", &meta).error(), "metadata.labels: expected string values");
  EXPECT_EQ(Meta(bare, R"({"metadata":{"name":1}})", &meta).error(), "metadata.name: expected a string");
  EXPECT_EQ(Meta(bare, R"({"metadata":[]})", &meta).error(), "metadata: expected an object");
}

}  // namespace
}  // namespace ray_webhook
