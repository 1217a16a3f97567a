#include "ray_webhook/core/model/decision.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

Denial Finding() { return {422, "Invalid", "duplicate-mount", std::string(300, 'm')}; }

TEST(Decision, EnforceDeniesAndDropsThePatch) {
  Decision d;
  d.patch.push_back({"add", "/x", std::string("1")});
  d.mutations.push_back(Mutation::kHeadNamed);
  d.Apply(RuleMode::kEnforce, Finding());
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.denial.rule, "duplicate-mount");
  EXPECT_TRUE(d.patch.empty());
  EXPECT_TRUE(d.mutations.empty());
}

TEST(Decision, WarnAllowsWithAShortWarning) {
  Decision d;
  d.Apply(RuleMode::kWarn, Finding());
  EXPECT_TRUE(d.allowed);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].rfind("duplicate-mount (warn mode): mmm", 0), 0u);
  EXPECT_EQ(d.warnings[0].size(), 120u);
}

TEST(Decision, OffIgnores) {
  Decision d;
  d.Apply(RuleMode::kOff, Finding());
  EXPECT_TRUE(d.allowed);
  EXPECT_TRUE(d.warnings.empty());
}

TEST(Decision, MutationNamesAreStable) {
  EXPECT_EQ(MutationName(Mutation::kFqRayIpAdded), "fq_ray_ip_added");
  EXPECT_EQ(MutationName(Mutation::kHeadNamed), "head_named");
  EXPECT_EQ(MutationName(Mutation::kGeneratedStartCommandRewritten), "generated_start_command_rewritten");
}

}  // namespace
}  // namespace ray_webhook
