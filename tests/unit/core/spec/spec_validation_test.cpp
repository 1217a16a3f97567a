#include "core/spec/spec_validation.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

void NoCheck(const SpecContext&, std::vector<SpecFinding>&) {}

SpecRule Row(KubeRayVersion since, KubeRayVersion until = {}, std::string_view gate = {}) {
  return SpecRule{"row", kSpecRayCluster, since, until, gate, "ray-operator/x.go:1@v1.0.0", NoCheck};
}

KubeRayTarget At(KubeRayVersion v) {
  KubeRayTarget t;
  t.version = v;
  return t;
}

TEST(SpecValidationTest, ARuleAppliesFromItsFirstReleaseUntilItsLast) {
  const SpecRule rule = Row({1, 3, 0}, {1, 5, 0});
  EXPECT_FALSE(SpecRuleApplies(rule, At({1, 2, 2})));
  EXPECT_TRUE(SpecRuleApplies(rule, At({1, 3, 0})));
  EXPECT_TRUE(SpecRuleApplies(rule, At({1, 4, 2})));
  EXPECT_FALSE(SpecRuleApplies(rule, At({1, 5, 0})));
  EXPECT_TRUE(SpecRuleApplies(Row({0, 3, 0}), At({1, 7, 0})));
}

TEST(SpecValidationTest, AGatedRuleFollowsTheGateNamedOrTheReleaseDefault) {
  const SpecRule needs_on = Row({1, 7, 0}, {}, "RayClusterMTLS");
  const SpecRule needs_off = Row({1, 7, 0}, {}, "!RayClusterMTLS");
  KubeRayTarget t = At({1, 7, 0});
  EXPECT_FALSE(SpecRuleApplies(needs_on, t));  // alpha, off by default at v1.7.0
  EXPECT_TRUE(SpecRuleApplies(needs_off, t));
  t.feature_gates["RayClusterMTLS"] = true;
  EXPECT_TRUE(SpecRuleApplies(needs_on, t));
  EXPECT_FALSE(SpecRuleApplies(needs_off, t));
}

TEST(SpecValidationTest, EveryRowIsFoundByItsId) {
  for (const SpecRule* rule : AllSpecRules()) EXPECT_EQ(FindSpecRule(rule->id), rule);
  EXPECT_EQ(FindSpecRule("no-such-rule"), nullptr);
}

}  // namespace
}  // namespace ray_webhook
