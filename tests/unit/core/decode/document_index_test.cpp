#include "ray_webhook/core/decode/document_index.h"

#include <gtest/gtest.h>

#include <string>

namespace ray_webhook {
namespace {

using Shape = DocumentIndex::Shape;
using Items = DocumentIndex::Items;

TEST(DocumentIndex, AnObjectIsItsOwnOutline) {
  DocumentIndex index;
  const std::string text = R"(  {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "namespace": "ns",
      "generateName": "p-", "labels": {"kind": "x"}}, "spec": {"kind": "y"}}  )";
  ASSERT_EQ(index.Read(text, 128), Shape::kObject);
  const DocumentIndex::Outline& root = index.root();
  EXPECT_TRUE(root.object);
  EXPECT_EQ(root.kind, "Pod");
  EXPECT_EQ(root.api_version, "v1");
  EXPECT_EQ(root.name, "p");
  EXPECT_EQ(root.generate_name, "p-");
  EXPECT_EQ(root.namespace_name, "ns");
  EXPECT_EQ(root.text.front(), '{');
  EXPECT_EQ(root.text.back(), '}');
  EXPECT_EQ(root.text.size(), text.size() - 4);
  EXPECT_GE(root.readable_padding, 2u);
  EXPECT_EQ(index.items_shape(), Items::kAbsent);
  EXPECT_TRUE(index.items().empty());
}

TEST(DocumentIndex, AListsItemsAreTheirExactTexts) {
  DocumentIndex index;
  const std::string text =
      R"({"kind":"PodList","apiVersion":"v1","metadata":{"continue":"abc","resourceVersion":"9"},
          "items":[ {"metadata":{"name":"a"},"kind":"Pod"} , 7, {"apiVersion":"v2","metadata":{"name":"b"},"x":[{}]}]})";
  ASSERT_EQ(index.Read(text, 128), Shape::kObject);
  EXPECT_EQ(index.root().kind, "PodList");
  EXPECT_EQ(index.continue_token(), "abc");
  ASSERT_EQ(index.items_shape(), Items::kList);
  ASSERT_EQ(index.items().size(), 3u);
  const auto& items = index.items();
  EXPECT_EQ(items[0].text, R"({"metadata":{"name":"a"},"kind":"Pod"})");
  EXPECT_EQ(items[0].kind, "Pod");
  EXPECT_EQ(items[0].name, "a");
  EXPECT_TRUE(items[0].api_version.empty());
  EXPECT_FALSE(items[1].object);
  EXPECT_EQ(items[2].text, R"({"apiVersion":"v2","metadata":{"name":"b"},"x":[{}]})");
  EXPECT_EQ(items[2].api_version, "v2");
  EXPECT_EQ(items[2].name, "b");
  // Every item may be read past its end as far as the buffer goes: enough to parse it in place.
  for (const auto& item : {items[0], items[2]}) EXPECT_GE(item.readable_padding, 64u);
}

TEST(DocumentIndex, FieldsOfTheWrongTypeReadAsAbsent) {
  DocumentIndex index;
  ASSERT_EQ(
      index.Read(R"({"kind": 1, "apiVersion": ["v1"], "metadata": {"name": 5, "continue": null}, "items": {}})", 128),
      Shape::kObject);
  EXPECT_TRUE(index.root().kind.empty());
  EXPECT_TRUE(index.root().api_version.empty());
  EXPECT_TRUE(index.root().name.empty());
  EXPECT_TRUE(index.continue_token().empty());
  EXPECT_EQ(index.items_shape(), Items::kOther);
  ASSERT_EQ(index.Read(R"({"kind": "List", "items": null})", 128), Shape::kObject);
  EXPECT_EQ(index.items_shape(), Items::kNull);
}

TEST(DocumentIndex, WhatIsNoObjectIsToldApart) {
  DocumentIndex index;
  EXPECT_EQ(index.Read("", 128), Shape::kNull);
  EXPECT_EQ(index.Read(" \n ", 128), Shape::kNull);
  EXPECT_EQ(index.Read("null", 128), Shape::kNull);
  EXPECT_EQ(index.Read("[]", 128), Shape::kNotObject);
  EXPECT_EQ(index.Read("\"x\"", 128), Shape::kNotObject);
  EXPECT_EQ(index.Read("{\"kind\": ", 128), Shape::kInvalidJson);
  EXPECT_FALSE(index.error().empty());
  EXPECT_EQ(index.Read("{} {}", 128), Shape::kInvalidJson);
  EXPECT_EQ(index.Read(R"({"items": [{"a": 1,}]})", 128), Shape::kInvalidJson);
  EXPECT_TRUE(index.items().empty());
  EXPECT_EQ(index.Read(R"({"kind": "x"})", 128), Shape::kObject);
}

TEST(DocumentIndex, NestingDeeperThanTheBoundIsRefusedBeforeParsing) {
  DocumentIndex index;
  const auto nested = [](std::size_t levels) {
    return "{\"a\":" + std::string(levels - 1, '[') + std::string(levels - 1, ']') + "}";
  };
  EXPECT_EQ(index.Read(nested(128), 128), Shape::kObject);
  EXPECT_EQ(index.Read(nested(129), 128), Shape::kTooDeep);
  // Brackets inside strings, escaped quotes included, are no nesting.
  EXPECT_EQ(index.Read(R"({"a": "[[[[\"[[[[", "b": [[]]})", 3), Shape::kObject);
}

}  // namespace
}  // namespace ray_webhook
