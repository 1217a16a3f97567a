#include "cli/manifest_files.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

using nlohmann::json;

struct Read {
  Status status = Status::Ok();
  std::vector<std::string> sources;
  std::vector<std::string> texts;
  std::vector<json> documents;  // the texts parsed, where they parse
};

Read ReadPath(const std::string& path, const std::string& stdin_text = "") {
  std::istringstream in(stdin_text);
  Read r;
  r.status =
      ForEachManifestDocument(path, in, [&](std::string_view text, std::size_t padding, const std::string& source) {
        EXPECT_GE(padding, 64u) << source;  // room for the parser to read in place
        r.sources.push_back(source);
        r.texts.emplace_back(text);
        r.documents.push_back(json::parse(text, nullptr, false));
        return Status::Ok();
      });
  return r;
}

std::string Fixture(const std::string& name) { return (testing::kFixtures / "audit" / name).string(); }

TEST(ManifestFiles, JsonAndYamlDumpsReadTheSame) {
  const Read j = ReadPath(Fixture("shallow-copy.json"));
  const Read y = ReadPath(Fixture("shallow-copy.yaml"));
  ASSERT_TRUE(j.status.ok()) << j.status.message();
  ASSERT_TRUE(y.status.ok()) << y.status.message();
  ASSERT_EQ(j.documents.size(), 1u);
  ASSERT_EQ(y.documents.size(), 1u);
  EXPECT_EQ(j.documents[0], y.documents[0]);
  EXPECT_EQ(j.sources[0], Fixture("shallow-copy.json") + " document 1");
}

TEST(ManifestFiles, SeveralYamlDocumentsAreNumbered) {
  const Read r = ReadPath(Fixture("manifests.yaml"));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.documents.size(), 6u);
  EXPECT_EQ(r.sources[5], Fixture("manifests.yaml") + " document 6");
  EXPECT_TRUE(r.documents[4].is_null());
  EXPECT_EQ(r.documents[5]["kind"], "RayService");
}

TEST(ManifestFiles, StdinIsDash) {
  const Read r = ReadPath("-", "\xEF\xBB\xBF  {\"kind\": \"List\", \"items\": []}");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.sources, std::vector<std::string>{"stdin document 1"});
  EXPECT_TRUE(ReadPath("-", " \n").documents.empty());
}

TEST(ManifestFiles, AJsonDumpIsHandedOnAsItIs) {
  // Unparsed: whoever reads it parses it once (the Auditor says "not JSON" for this one).
  const Read truncated = ReadPath(Fixture("bad/truncated.json"));
  ASSERT_TRUE(truncated.status.ok()) << truncated.status.message();
  ASSERT_EQ(truncated.texts.size(), 1u);
  EXPECT_EQ(truncated.texts[0], testing::ReadFixture("audit/bad/truncated.json").substr(0, truncated.texts[0].size()));
  EXPECT_TRUE(truncated.documents[0].is_discarded());
}

TEST(ManifestFiles, YamlBecomesJsonTextOnce) {
  const Read r = ReadPath("-", "kind: Pod\nmetadata: {name: p, labels: {a: 'yes', b: yes}}\n");
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.texts.size(), 1u);
  EXPECT_EQ(r.texts[0], R"({"kind":"Pod","metadata":{"labels":{"a":"yes","b":true},"name":"p"}})");
}

TEST(ManifestFiles, ErrorsNameTheFileAndDocument) {
  const Read yaml = ReadPath(Fixture("bad/not-yaml.yaml"));
  EXPECT_EQ(yaml.status.message().rfind(Fixture("bad/not-yaml.yaml") + " document 1, line ", 0), 0u)
      << yaml.status.message();
  EXPECT_EQ(ReadPath("/nonexistent/x.yaml").status.message(), "cannot read /nonexistent/x.yaml");
}

TEST(ManifestFiles, TheSinksErrorIsReturnedAsItIs) {
  std::istringstream in;
  Status s = ForEachManifestDocument(
      Fixture("manifests.yaml"), in,
      [](std::string_view, std::size_t, const std::string& source) { return Status::Error(source + ": no"); });
  EXPECT_EQ(s.message(), Fixture("manifests.yaml") + " document 1: no");
}

}  // namespace
}  // namespace ray_webhook
