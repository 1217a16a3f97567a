// Every spec rule against its cases, tests/fixtures/spec/<rule-id>.yaml: a
// stream of documents, each
//   refused: FIELD-PATH      (the rule must name this field)
// or
//   allowed: true            (the rule must find nothing)
// and `object:`, the ray.io object as a user applies it. Each refused case is
// also run through CheckSpec at the edges of the rule's version range and
// gate: found at `since`, not before it, not at `until`, not with its gate
// the other way.
#include "core/spec/spec_rules.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>

#include "cli/yaml_documents.h"
#include "core/spec/spec_validation.h"
#include "spec_dom.h"
#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

using nlohmann::json;

struct SpecCase {
  std::size_t number = 0;
  std::string refused_field;  // empty for an allowed case
  json object;
};

std::vector<SpecCase> ReadCases(const std::string& rule_id) {
  std::vector<SpecCase> cases;
  std::ifstream in(testing::kFixtures / "spec" / (rule_id + ".yaml"));
  if (!in) return cases;
  const Status read = ForEachYamlDocument(in, [&](json&& doc, std::size_t n) {
    SpecCase c{n, doc.value("refused", ""), doc.value("object", json())};
    if (c.refused_field.empty() && doc.value("allowed", false) != true) {
      return Status::Error("document " + std::to_string(n) + " says neither refused: FIELD nor allowed: true");
    }
    cases.push_back(std::move(c));
    return Status::Ok();
  });
  EXPECT_TRUE(read.ok()) << rule_id << ".yaml: " << read.message();
  return cases;
}

RayObjectKind KindOf(const json& object) {
  const std::string api = object.value("apiVersion", "");
  const std::size_t slash = api.find('/');
  const std::optional<RayObjectKind> kind = RayObjectKindOf(
      {api.substr(0, slash), slash == std::string::npos ? "" : api.substr(slash + 1), object.value("kind", "")});
  EXPECT_TRUE(kind.has_value()) << "not a ray.io object: " << api << " " << object.value("kind", "");
  return kind.value_or(RayObjectKind::kRayCluster);
}

bool Names(const std::vector<SpecFinding>& findings, std::string_view rule, std::string_view field = {}) {
  for (const SpecFinding& f : findings) {
    if (f.rule == rule && (field.empty() || f.field_path == field)) return true;
  }
  return false;
}

// The target where the rule applies: its first release, its gate as it needs it, and for a
// RayCronJob the RayCronJob gate (without it nothing checks one).
KubeRayTarget InRange(const SpecRule& rule, RayObjectKind kind) {
  KubeRayTarget t;
  t.version = rule.since;
  if (kind == RayObjectKind::kRayCronJob) t.feature_gates["RayCronJob"] = true;
  if (!rule.gate.empty()) {
    const bool off = rule.gate.front() == '!';
    t.feature_gates[std::string(off ? rule.gate.substr(1) : rule.gate)] = !off;
  }
  return t;
}

KubeRayVersion Before(KubeRayVersion v) {
  if (v.patch > 0) return {v.major, v.minor, v.patch - 1};
  if (v.minor > 0) return {v.major, v.minor - 1, 99};
  return {v.major - 1, 99, 99};
}

TEST(SpecRulesTest, EveryRuleHasRefusedAndAllowedCases) {
  for (const SpecRule* rule : AllSpecRules()) {
    const std::vector<SpecCase> cases = ReadCases(std::string(rule->id));
    const auto refused =
        std::count_if(cases.begin(), cases.end(), [](const SpecCase& c) { return !c.refused_field.empty(); });
    EXPECT_GT(refused, 0) << rule->id << ": no refused case in tests/fixtures/spec/" << rule->id << ".yaml";
    EXPECT_LT(static_cast<std::size_t>(refused), cases.size()) << rule->id << ": no allowed case";
  }
}

TEST(SpecRulesTest, EveryCaseFileNamesARule) {
  for (const auto& entry : std::filesystem::directory_iterator(testing::kFixtures / "spec")) {
    if (entry.path().extension() != ".yaml") continue;
    EXPECT_NE(FindSpecRule(entry.path().stem().string()), nullptr) << entry.path().filename() << " names no rule";
  }
}

TEST(SpecRulesTest, EachRuleRefusesAndAllowsItsCases) {
  for (const SpecRule* rule : AllSpecRules()) {
    for (const SpecCase& c : ReadCases(std::string(rule->id))) {
      const std::vector<SpecFinding> found =
          CheckSpecRule(*rule, testing::SpecDom(c.object).Root(), KindOf(c.object), InRange(*rule, KindOf(c.object)));
      const std::string where = std::string(rule->id) + ".yaml document " + std::to_string(c.number);
      if (c.refused_field.empty()) {
        EXPECT_FALSE(Names(found, rule->id))
            << where << ": allowed, but found " << found.front().field_path << ": " << found.front().message;
      } else {
        EXPECT_TRUE(Names(found, rule->id, c.refused_field)) << where << ": no finding at " << c.refused_field;
        for (const SpecFinding& f : found) {
          EXPECT_FALSE(f.message.empty()) << where;
          EXPECT_EQ(f.message.find(f.field_path), std::string::npos) << where << ": the message repeats the path";
        }
      }
    }
  }
}

TEST(SpecRulesTest, EachRuleHoldsOnlyWhereItsReleasesAndGateSay) {
  for (const SpecRule* rule : AllSpecRules()) {
    for (const SpecCase& c : ReadCases(std::string(rule->id))) {
      if (c.refused_field.empty()) continue;
      const std::string where = std::string(rule->id) + ".yaml document " + std::to_string(c.number);
      const RayObjectKind kind = KindOf(c.object);
      const KubeRayTarget in_range = InRange(*rule, kind);
      EXPECT_TRUE(Names(CheckSpec(testing::SpecDom(c.object).Root(), kind, in_range), rule->id))
          << where << " at " << ShowKubeRayVersion(in_range.version);
      if (KubeRayVersion{0, 3, 0} < rule->since) {
        KubeRayTarget before = in_range;
        before.version = Before(rule->since);
        EXPECT_FALSE(Names(CheckSpec(testing::SpecDom(c.object).Root(), kind, before), rule->id))
            << where << " at " << ShowKubeRayVersion(before.version);
      }
      if (rule->until != KubeRayVersion{}) {
        KubeRayTarget after = in_range;
        after.version = rule->until;
        EXPECT_FALSE(Names(CheckSpec(testing::SpecDom(c.object).Root(), kind, after), rule->id))
            << where << " at " << ShowKubeRayVersion(after.version);
      }
      if (!rule->gate.empty()) {
        KubeRayTarget other = in_range;
        bool& gate_on = other.feature_gates[std::string(rule->gate.front() == '!' ? rule->gate.substr(1) : rule->gate)];
        gate_on = !gate_on;
        EXPECT_FALSE(Names(CheckSpec(testing::SpecDom(c.object).Root(), kind, other), rule->id))
            << where << " with " << rule->gate << " the other way";
      }
    }
  }
}

TEST(SpecRulesTest, RowsAreWellFormed) {
  const std::regex id("^[a-z0-9]+(-[a-z0-9]+)*$");
  const std::regex source(R"(^ray-operator/[a-z0-9_/]+\.go:[0-9]+@v[0-9]+\.[0-9]+\.[0-9]+$)");
  std::set<std::string_view> ids;
  for (const SpecRule* rule : AllSpecRules()) {
    EXPECT_TRUE(std::regex_match(std::string(rule->id), id)) << rule->id;
    EXPECT_TRUE(ids.insert(rule->id).second) << rule->id << " twice";
    EXPECT_TRUE(std::regex_match(std::string(rule->source), source)) << rule->id << ": " << rule->source;
    EXPECT_NE(rule->kinds, 0u) << rule->id;
    EXPECT_NE(rule->check, nullptr) << rule->id;
    if (rule->until != KubeRayVersion{}) {
      EXPECT_LT(rule->since, rule->until) << rule->id;
    }
  }
}

// docs/rules.md lists every rule id, so that --spec-rule ID=MODE has a page to point at.
TEST(SpecRulesTest, TheDocumentationListsEveryRule) {
  std::ifstream in(testing::kFixtures / ".." / ".." / "docs" / "rules.md");
  ASSERT_TRUE(in) << "docs/rules.md";
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const SpecRule* rule : AllSpecRules()) {
    EXPECT_NE(doc.find("| `" + std::string(rule->id) + "` |"), std::string::npos)
        << rule->id << " has no row in docs/rules.md";
  }
}

// Without the RayCronJob gate the operator never reconciles a RayCronJob: none of its rules, nor
// those of the RayJob and RayCluster it carries, hold.
TEST(SpecRulesTest, NothingChecksARayCronJobWithoutItsGate) {
  for (const SpecRule* rule : AllSpecRules()) {
    for (const SpecCase& c : ReadCases(std::string(rule->id))) {
      if (c.refused_field.empty() || KindOf(c.object) != RayObjectKind::kRayCronJob) continue;
      KubeRayTarget off = InRange(*rule, RayObjectKind::kRayCronJob);
      off.feature_gates["RayCronJob"] = false;
      EXPECT_TRUE(CheckSpec(testing::SpecDom(c.object).Root(), RayObjectKind::kRayCronJob, off).empty())
          << rule->id << " " << c.number;
    }
  }
}

}  // namespace
}  // namespace ray_webhook
