#include "ray_webhook/core/model/kuberay_target.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

TEST(KubeRayTargetTest, VersionsParseWithOrWithoutV) {
  EXPECT_EQ(ParseKubeRayVersion("1.6.2"), (KubeRayVersion{1, 6, 2}));
  EXPECT_EQ(ParseKubeRayVersion("v0.3.0"), (KubeRayVersion{0, 3, 0}));
  for (const char* bad : {"", "1.6", "1.6.2.1", "v", "1..2", "a.b.c", "1.6.x", "-1.0.0", "1.6.2 "}) {
    EXPECT_EQ(ParseKubeRayVersion(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(ShowKubeRayVersion({1, 7, 0}), "1.7.0");
  EXPECT_LT((KubeRayVersion{1, 6, 2}), (KubeRayVersion{1, 7, 0}));
}

TEST(KubeRayTargetTest, GatesTakeTheReleaseDefaultUnlessNamed) {
  KubeRayTarget t;
  t.version = {1, 5, 1};
  EXPECT_FALSE(t.GateEnabled("RayJobDeletionPolicy"));  // alpha at v1.5
  t.version = {1, 6, 2};
  EXPECT_TRUE(t.GateEnabled("RayJobDeletionPolicy"));  // beta from v1.6.0
  EXPECT_FALSE(t.GateEnabled("RayCronJob"));
  EXPECT_FALSE(t.GateEnabled("NoSuchGate"));
  t.feature_gates["RayCronJob"] = true;
  t.feature_gates["RayJobDeletionPolicy"] = false;
  EXPECT_TRUE(t.GateEnabled("RayCronJob"));
  EXPECT_FALSE(t.GateEnabled("RayJobDeletionPolicy"));
  t.version = {1, 7, 0};
  t.feature_gates.clear();
  EXPECT_TRUE(t.GateEnabled("RayServiceIncrementalUpgrade"));
  EXPECT_FALSE(t.GateEnabled("RayClusterMTLS"));
}

TEST(KubeRayTargetTest, FeatureGatesParseAsTheOperatorsFlag) {
  std::map<std::string, bool, std::less<>> gates;
  ASSERT_TRUE(ParseFeatureGates("RayClusterMTLS=true, RayCronJob=false,", &gates).ok());
  EXPECT_EQ(gates, (std::map<std::string, bool, std::less<>>{{"RayClusterMTLS", true}, {"RayCronJob", false}}));
  for (const char* bad : {"RayClusterMTLS", "RayClusterMTLS=yes", "=true", "A=true,B"}) {
    std::map<std::string, bool, std::less<>> out;
    const Status s = ParseFeatureGates(bad, &out);
    EXPECT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("NAME=true"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace ray_webhook
