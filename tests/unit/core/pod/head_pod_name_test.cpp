#include "ray_webhook/core/pod/head_pod_name.h"

#include <gtest/gtest.h>

#include "support/pod_builder.h"

namespace ray_webhook {
namespace {

using testing::PodBuilder;

// KubeRay utils.PodName (ray-operator/controllers/ray/utils/util.go): lowercase, first 50 characters, "-head".
TEST(DeterministicHeadPodName, IsKubeRaysPodNameUpToFiftyCharacters) {
  EXPECT_EQ(DeterministicHeadPodName("raycluster-kuberay"), "raycluster-kuberay-head");
  EXPECT_EQ(DeterministicHeadPodName("RayCluster-Upper"), "raycluster-upper-head");
  EXPECT_EQ(DeterministicHeadPodName(std::string(50, 'a')), std::string(50, 'a') + "-head");
  const std::string sixty = "raycluster-with-a-rather-long-name-for-the-fifty-character-x";
  ASSERT_EQ(sixty.size(), 60u);
  EXPECT_EQ(KubeRayHeadPodName(sixty), sixty.substr(0, 50) + "-head");
}

TEST(DeterministicHeadPodName, LongerNamesKeepAPrefixAndAHashOfTheWhole) {
  const std::string sixty = "raycluster-with-a-rather-long-name-for-the-fifty-character-x";
  const std::string name = DeterministicHeadPodName(sixty);
  EXPECT_EQ(name, DeterministicHeadPodName(sixty)) << "the same every time";
  EXPECT_LE(name.size(), 63u);
  EXPECT_TRUE(name.starts_with(sixty.substr(0, 49))) << name;
  EXPECT_TRUE(name.ends_with("-head"));
  EXPECT_NE(name, DeterministicHeadPodName(sixty.substr(0, 59) + "y")) << "differs where KubeRay's name does not";
  // A prefix that ends in '-' or '.' loses it: "--" is fine in a label, ".-" is not a valid name.
  const std::string dotted = std::string(48, 'a') + ".-rest-of-the-name";
  EXPECT_EQ(DeterministicHeadPodName(dotted).substr(0, 49), std::string(48, 'a') + "-");
}

// The two cluster names of one RayService upgrade, as KubeRay 1.3 (GenerateRayClusterName:
// <service>-raycluster-<5 random>) and 1.4+ (<service>-<5 random>) make them.
TEST(DeterministicHeadPodName, TheOldAndTheNewClusterOfARayServiceUpgradeNeverShareAName) {
  const std::string service_38 = "recommendation-serving-production-east";  // 38 characters
  // 45 characters leave at most 4 random ones within KubeRay's 50, 49 none.
  const std::string service_49 = "recommendation-serving-production-us-east-two-blu";
  ASSERT_EQ(service_38.size(), 38u);
  ASSERT_EQ(service_49.size(), 49u);
  for (const auto& [old_cluster, new_cluster] :
       {std::pair{service_38 + "-raycluster-x7k2p", service_38 + "-raycluster-m4q9z"},
        std::pair{service_49 + "-x7k2p", service_49 + "-m4q9z"}}) {
    EXPECT_EQ(KubeRayHeadPodName(old_cluster), KubeRayHeadPodName(new_cluster)) << "KubeRay's names collide";
    EXPECT_NE(DeterministicHeadPodName(old_cluster), DeterministicHeadPodName(new_cluster));
    EXPECT_LE(DeterministicHeadPodName(new_cluster).size(), 63u);
  }
}

TEST(IsDeterministicHeadPodName, TakesOursAndTheOperatorsOwn) {
  const std::string long_cluster = std::string(55, 'c');
  EXPECT_TRUE(IsDeterministicHeadPodName(DeterministicHeadPodName(long_cluster), long_cluster));
  EXPECT_TRUE(IsDeterministicHeadPodName(KubeRayHeadPodName(long_cluster), long_cluster));
  EXPECT_FALSE(IsDeterministicHeadPodName(long_cluster + "-head", long_cluster));
  EXPECT_FALSE(IsDeterministicHeadPodName("c-head-x7k2p", "c"));
}

TEST(ImageTag, TagDigestAndRegistryPort) {
  EXPECT_EQ(ImageTag("rayproject/ray:2.9.0"), "2.9.0");
  EXPECT_EQ(ImageTag("rayproject/ray:2.48.0-py310-gpu"), "2.48.0-py310-gpu");
  EXPECT_EQ(ImageTag("rayproject/ray"), "");
  EXPECT_EQ(ImageTag("my-registry:5000/ray@sha256:0123abcd"), "");
  EXPECT_EQ(ImageTag("my-registry:5000/ray"), "");
  EXPECT_EQ(ImageTag("my-registry:5000/ray:2.50.1@sha256:0123abcd"), "2.50.1");
  EXPECT_EQ(ImageTag("ray:nightly"), "nightly");
}

TEST(ParseRayVersion, MajorMinorPrefix) {
  ASSERT_TRUE(ParseRayVersion("2.9.0"));
  EXPECT_EQ(ParseRayVersion("2.9.0")->minor, 9);
  EXPECT_EQ(ParseRayVersion("2.48.0-py310-gpu")->minor, 48);
  EXPECT_EQ(ParseRayVersion("2.48")->minor, 48);
  EXPECT_FALSE(ParseRayVersion("nightly"));
  EXPECT_FALSE(ParseRayVersion("latest"));
  EXPECT_FALSE(ParseRayVersion(""));
  EXPECT_FALSE(ParseRayVersion("2"));
  EXPECT_FALSE(ParseRayVersion("2.x"));
  EXPECT_FALSE(ParseRayVersion("2.48abc"));
  EXPECT_TRUE(*ParseRayVersion("2.9.0") < kFirstRayVersionSafeWithFixedHeadName);
  EXPECT_FALSE(*ParseRayVersion("2.48.0") < kFirstRayVersionSafeWithFixedHeadName);
  EXPECT_FALSE(*ParseRayVersion("3.0.0") < kFirstRayVersionSafeWithFixedHeadName);
}

PodBuilder Head(std::string image, std::string v2) {
  PodBuilder b;
  b.RayHead("rc").Container("ray-head");
  if (!v2.empty()) b.Env("RAY_enable_autoscaler_v2", std::move(v2));
  b.Image(std::move(image));
  return b;
}

// KubeRay #3868: Autoscaler v2 on Ray < 2.48 breaks when a restarted head keeps its name.
TEST(AutoscalerV2ForbidsFixedHeadName, OnlyWithV2AndOldOrUnknownRay) {
  // The image goes on the Ray container, which must be the one being edited.
  EXPECT_TRUE(AutoscalerV2ForbidsFixedHeadName(Head("rayproject/ray:2.9.0", "1").pod()));
  EXPECT_TRUE(AutoscalerV2ForbidsFixedHeadName(Head("rayproject/ray:2.47.1", "true").pod()));
  EXPECT_TRUE(AutoscalerV2ForbidsFixedHeadName(Head("rayproject/ray:nightly", "True").pod()));
  EXPECT_TRUE(AutoscalerV2ForbidsFixedHeadName(Head("my-registry:5000/ray@sha256:abc", "1").pod()));
  EXPECT_FALSE(AutoscalerV2ForbidsFixedHeadName(Head("rayproject/ray:2.48.0-py310-gpu", "1").pod()));
  EXPECT_FALSE(AutoscalerV2ForbidsFixedHeadName(Head("rayproject/ray:2.9.0", "0").pod()));
  EXPECT_FALSE(AutoscalerV2ForbidsFixedHeadName(Head("rayproject/ray:2.9.0", "").pod()));
}

}  // namespace
}  // namespace ray_webhook
