#include "ray_webhook/core/pod/second_head_rule.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

const RayPodIdentity kHead{RayNodeType::kHead, "rc", "headgroup"};

std::optional<Denial> Check(std::vector<HeadPod> heads, std::string_view own = "rc-head") {
  return CheckSecondHead(heads, own, kHead);
}

TEST(SecondHeadRule, NoHeadIsAllowed) { EXPECT_FALSE(Check({})); }

TEST(SecondHeadRule, LiveHeadUnderAnotherNameIsAConflict) {
  const auto d = Check({{"rc-head-x7k2p", "Running", false}});
  ASSERT_TRUE(d);
  EXPECT_EQ(d->code, 409);
  EXPECT_EQ(d->reason, "Conflict");
  EXPECT_EQ(d->rule, kSecondHeadRule);
  EXPECT_NE(d->message.find("\"rc-head-x7k2p\" (phase Running)"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("RayCluster \"rc\""), std::string::npos);
}

TEST(SecondHeadRule, PendingAndUnknownPhasesAreLive) {
  EXPECT_TRUE(Check({{"other", "Pending", false}}));
  const auto unknown = Check({{"other", "", false}});
  ASSERT_TRUE(unknown);
  EXPECT_NE(unknown->message.find("(phase unknown)"), std::string::npos) << unknown->message;
}

TEST(SecondHeadRule, TerminatingFailedSucceededAndSelfAreNotLive) {
  EXPECT_FALSE(Check(
      {{"a", "Running", true}, {"b", "Failed", false}, {"c", "Succeeded", false}, {"rc-head", "Running", false}}));
}

TEST(SecondHeadRule, ALookupFailureIsWordedWithItsCause) {
  const std::string why = SecondHeadLookupFailure(kHead, Status::Error("no answer from the Kubernetes API"));
  EXPECT_EQ(why, "could not check RayCluster \"rc\" for another head Pod: no answer from the Kubernetes API");
  EXPECT_LE(SecondHeadLookupFailure(kHead, Status::Error(std::string(1000, 'x'))).size(), 260u);
}

}  // namespace
}  // namespace ray_webhook
