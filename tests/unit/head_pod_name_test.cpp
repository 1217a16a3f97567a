#include "ray_webhook/head_pod_name.h"

#include <gtest/gtest.h>

#include "pod_builder.h"

namespace ray_webhook {
namespace {

using testing::PodBuilder;

// KubeRay utils.PodName: lowercase, first 50 characters, "-head".
TEST(DeterministicHeadPodName, KubeRayPodName) {
  EXPECT_EQ(DeterministicHeadPodName("raycluster-kuberay"), "raycluster-kuberay-head");
  EXPECT_EQ(DeterministicHeadPodName("RayCluster-Upper"), "raycluster-upper-head");
  const std::string sixty = "raycluster-with-a-rather-long-name-for-the-fifty-character-x";
  ASSERT_EQ(sixty.size(), 60u);
  EXPECT_EQ(DeterministicHeadPodName(sixty), sixty.substr(0, 50) + "-head");
  EXPECT_EQ(DeterministicHeadPodName(std::string(50, 'a')), std::string(50, 'a') + "-head");
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
