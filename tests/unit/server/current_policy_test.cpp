#include "ray_webhook/server/current_policy.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

KubeRayTarget Target(int minor, bool cron = false) {
  KubeRayTarget t;
  t.version = {1, minor, 0};
  if (cron) t.feature_gates["RayCronJob"] = true;
  return t;
}

TEST(CurrentPolicy, ATargetReplacesOnlyTheKubeRayReleaseAndAnEarlierPolicyStaysValid) {
  PolicyConfig initial;
  initial.cluster_domain = "example.org";
  CurrentPolicy policy(initial);
  const PolicyConfig* before = &policy.Get();
  ASSERT_TRUE(policy.SetTarget(Target(7, true)));
  EXPECT_EQ(policy.Get().kuberay.version, (KubeRayVersion{1, 7, 0}));
  EXPECT_TRUE(policy.Get().kuberay.GateEnabled("RayCronJob"));
  EXPECT_EQ(policy.Get().cluster_domain, "example.org");
  // A review that started under the first policy still reads it.
  EXPECT_EQ(before->kuberay.version, initial.kuberay.version);
}

TEST(CurrentPolicy, AnEqualTargetReusesItsPolicyAndDistinctOnesAreBounded) {
  CurrentPolicy policy{PolicyConfig{}};
  ASSERT_TRUE(policy.SetTarget(Target(7)));
  const PolicyConfig* seven = &policy.Get();
  ASSERT_TRUE(policy.SetTarget(Target(5)));
  ASSERT_TRUE(policy.SetTarget(Target(7)));
  EXPECT_EQ(&policy.Get(), seven);
  for (int minor = 100; minor < 100 + static_cast<int>(CurrentPolicy::kMaxKept); ++minor)
    policy.SetTarget(Target(minor));
  const KubeRayVersion kept = policy.Get().kuberay.version;
  EXPECT_FALSE(policy.SetTarget(Target(999)));
  EXPECT_EQ(policy.Get().kuberay.version, kept);
}

}  // namespace
}  // namespace ray_webhook
