#include "ray_webhook/second_head_rule.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

const RayPodIdentity kHead{RayNodeType::kHead, "rc", "headgroup"};

PodListResult Listed(std::vector<PodSummary> pods) { return PodListResult{true, 200, std::move(pods), ""}; }

Decision Judge(const PodListResult& heads, const Config& config = Config{}, std::string_view own = "rc-head") {
  Decision d;
  JudgeSecondHead(heads, own, kHead, config, d);
  return d;
}

TEST(SecondHeadRule, NoHeadIsAllowed) {
  const Decision d = Judge(Listed({}));
  EXPECT_TRUE(d.allowed);
  EXPECT_TRUE(d.warnings.empty());
}

TEST(SecondHeadRule, LiveHeadUnderAnotherNameIsA409) {
  const Decision d = Judge(Listed({{"rc-head-x7k2p", "Running", false}}));
  ASSERT_FALSE(d.allowed);
  EXPECT_EQ(d.denial.code, 409);
  EXPECT_EQ(d.denial.rule, kSecondHeadRule);
  EXPECT_NE(d.denial.message.find("\"rc-head-x7k2p\" (phase Running)"), std::string::npos) << d.denial.message;
  EXPECT_NE(d.denial.message.find("RayCluster \"rc\""), std::string::npos);
}

TEST(SecondHeadRule, PendingAndUnknownPhasesAreLive) {
  EXPECT_FALSE(Judge(Listed({{"other", "Pending", false}})).allowed);
  EXPECT_FALSE(Judge(Listed({{"other", "", false}})).allowed);
}

TEST(SecondHeadRule, TerminatingFailedSucceededAndSelfAreNotLive) {
  EXPECT_TRUE(Judge(Listed({{"a", "Running", true}, {"b", "Failed", false}, {"c", "Succeeded", false},
                            {"rc-head", "Running", false}}))
                  .allowed);
}

TEST(SecondHeadRule, WarnModeAllowsWithWarning) {
  Config c;
  c.second_head_mode = RuleMode::kWarn;
  const Decision d = Judge(Listed({{"other", "Running", false}}), c);
  EXPECT_TRUE(d.allowed);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].rfind("second-head (warn mode): ", 0), 0u) << d.warnings[0];
}

TEST(SecondHeadRule, LookupFailureWarnsByDefaultAndDeniesWhenConfigured) {
  const PodListResult failed{false, 0, {}, "no answer from the Kubernetes API"};
  const Decision warn = Judge(failed);
  EXPECT_TRUE(warn.allowed);
  ASSERT_EQ(warn.warnings.size(), 1u);
  EXPECT_NE(warn.warnings[0].find("could not check"), std::string::npos);
  Config deny;
  deny.deny_on_lookup_failure = true;
  const Decision denied = Judge(failed, deny);
  EXPECT_FALSE(denied.allowed);
  EXPECT_EQ(denied.denial.code, 503);
  EXPECT_NE(denied.denial.message.find("--head-lookup-failure=deny"), std::string::npos);
}

}  // namespace
}  // namespace ray_webhook
