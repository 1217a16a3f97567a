#include "cli/yaml_documents.h"

#include <gtest/gtest.h>

#include <sstream>

#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

using nlohmann::json;

Result<std::vector<json>> Parse(const std::string& text) {
  std::istringstream in(text);
  std::vector<json> docs;
  Status s = ForEachYamlDocument(in, [&](json&& d, std::size_t n) {
    EXPECT_EQ(n, docs.size() + 1);
    docs.push_back(std::move(d));
    return Status::Ok();
  });
  if (!s.ok()) return s;
  return docs;
}

TEST(YamlDocuments, SeveralDocumentsInOrder) {
  auto docs = Parse("a: 1\n---\n# only a comment\n---\nb: [x, 'y']\n...\n---\nc: {}\n");
  ASSERT_TRUE(docs.ok()) << docs.error();
  ASSERT_EQ(docs->size(), 4u);
  EXPECT_EQ((*docs)[0], json({{"a", 1}}));
  EXPECT_TRUE((*docs)[1].is_null());  // a document of comments alone is empty
  EXPECT_EQ((*docs)[2], json({{"b", {"x", "y"}}}));
  EXPECT_EQ((*docs)[3], json({{"c", json::object()}}));
}

TEST(YamlDocuments, ScalarsResolveAsKubernetesResolvesThem) {
  auto docs = Parse(
      "s: hello\nq: '5'\ndq: \"true\"\ni: 42\nneg: -7\nhex: 0x1F\noct: 0755\nf: 1.5\ne: 1e3\nt: true\nyes: yes\n"
      "off: Off\nnul: null\ntilde: ~\nempty:\nstr: !!str 10\nblock: |\n  line\ninf: .inf\nver: 2.46.0\nmem: 1G\n"
      "big: 18446744073709551616\n");
  ASSERT_TRUE(docs.ok()) << docs.error();
  const json& d = (*docs)[0];
  EXPECT_EQ(d["s"], "hello");
  EXPECT_EQ(d["q"], "5");
  EXPECT_EQ(d["dq"], "true");
  EXPECT_EQ(d["i"], 42);
  EXPECT_EQ(d["neg"], -7);
  EXPECT_EQ(d["hex"], 31);
  EXPECT_EQ(d["oct"], 493);
  EXPECT_EQ(d["f"], 1.5);
  EXPECT_EQ(d["e"], 1000.0);
  EXPECT_EQ(d["t"], true);
  // The keys yes and off are booleans too (YAML 1.1), written as "true" and "false" as sigs.k8s.io/yaml does.
  EXPECT_EQ(d["true"], true) << d.dump();
  EXPECT_EQ(d["false"], false) << d.dump();
  EXPECT_TRUE(d["nul"].is_null());
  EXPECT_TRUE(d["tilde"].is_null());
  EXPECT_TRUE(d["empty"].is_null());
  EXPECT_EQ(d["str"], "10");
  EXPECT_EQ(d["block"], "line\n");
  EXPECT_EQ(d["inf"], ".inf");
  EXPECT_EQ(d["ver"], "2.46.0");
  EXPECT_EQ(d["mem"], "1G");
  EXPECT_TRUE(d["big"].is_number_float());
}

TEST(YamlDocuments, AnchorsAndAliasesAreCopies) {
  auto docs = Parse("base: &b {image: ray}\nuse: *b\n");
  ASSERT_TRUE(docs.ok()) << docs.error();
  EXPECT_EQ((*docs)[0]["use"], json({{"image", "ray"}}));
}

TEST(YamlDocuments, ErrorsNameTheDocumentLineAndColumn) {
  auto bad = Parse("a: 1\n---\nb: [1, 2\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().rfind("document 2, line ", 0), 0u) << bad.error();
  EXPECT_NE(bad.error().find("not YAML"), std::string::npos) << bad.error();
  auto complex_key = Parse("? [a, b]\n: c\n");
  ASSERT_FALSE(complex_key.ok());
  EXPECT_NE(complex_key.error().find("a mapping key that is a mapping or a sequence"), std::string::npos)
      << complex_key.error();
}

TEST(YamlDocuments, AliasExpansionIsBounded) {
  auto bomb = Parse(testing::ReadFixture("audit/bad/alias-bomb.yaml"));
  ASSERT_FALSE(bomb.ok());
  EXPECT_NE(bomb.error().find("aliases expand to more than"), std::string::npos) << bomb.error();
}

TEST(YamlDocuments, NestingIsBounded) {
  auto deep = Parse("a: " + std::string(5000, '[') + std::string(5000, ']') + "\n");
  ASSERT_FALSE(deep.ok());
  auto shallow_enough = Parse("a: " + std::string(100, '[') + std::string(100, ']') + "\n");
  EXPECT_TRUE(shallow_enough.ok()) << shallow_enough.error();
}

TEST(YamlDocuments, TheSinkStopsTheStream) {
  std::istringstream in("a: 1\n---\nb: 2\n");
  std::size_t seen = 0;
  Status s = ForEachYamlDocument(in, [&](json&&, std::size_t) {
    ++seen;
    return Status::Error("stop");
  });
  EXPECT_EQ(s.message(), "stop");
  EXPECT_EQ(seen, 1u);
}

}  // namespace
}  // namespace ray_webhook
