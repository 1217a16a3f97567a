#include "ray_webhook/core/pod/cluster_head_name_rule.h"

#include <gtest/gtest.h>

#include "support/ray_object_builder.h"

namespace ray_webhook {
namespace {

using testing::RayObjectBuilder;

std::optional<TemplateFinding> Check(std::string name, RayObjectKind kind, std::string_view request_name = {}) {
  RayObjectBuilder b(std::move(name), kind);
  b.Head();
  return CheckClusterHeadName(b.object(), request_name);
}

TEST(ClusterHeadNameRule, ARayClusterOfAtMost50CharactersPasses) {
  EXPECT_FALSE(Check(std::string(50, 'a'), RayObjectKind::kRayCluster));
}

TEST(ClusterHeadNameRule, ALongerRayClusterNameSharesKubeRaysHeadName) {
  const std::string name = std::string(50, 'a') + "-x";
  const auto f = Check(name, RayObjectKind::kRayCluster);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->field_path, "metadata.name");
  EXPECT_EQ(f->summary.rfind("name of 52 characters: ", 0), 0u) << f->summary;
  EXPECT_NE(f->summary.find("\"" + std::string(50, 'a') + "-head\""), std::string::npos);
  EXPECT_NE(f->summary.find("ENABLE_DETERMINISTIC_HEAD_POD_NAME"), std::string::npos);
  EXPECT_NE(f->summary.find("at most 50 characters"), std::string::npos);
}

TEST(ClusterHeadNameRule, ARayServiceCountsTheRandomSuffixOfItsClusters) {
  EXPECT_FALSE(Check(std::string(44, 's'), RayObjectKind::kRayService));
  const auto f = Check(std::string(45, 's'), RayObjectKind::kRayService);
  ASSERT_TRUE(f);
  EXPECT_NE(f->summary.find("keep 4 of 5 random characters"), std::string::npos) << f->summary;
  EXPECT_NE(f->summary.find("an upgrade's two clusters can share one"), std::string::npos);
  EXPECT_NE(f->summary.find("at most 44 characters"), std::string::npos);
  const auto none_left = Check(std::string(49, 's'), RayObjectKind::kRayService);
  ASSERT_TRUE(none_left);
  EXPECT_NE(none_left->summary.find("keep 0 of 5"), std::string::npos);
}

TEST(ClusterHeadNameRule, ARayJobOnAnExistingClusterHasNoHeadOfItsOwn) {
  RayObjectBuilder b(std::string(47, 'j'), RayObjectKind::kRayJob);
  b.ClusterSelector();
  EXPECT_FALSE(CheckClusterHeadName(b.object(), {}));
  const auto f = Check(std::string(47, 'j'), RayObjectKind::kRayJob);
  ASSERT_TRUE(f);
  EXPECT_NE(f->summary.find("keep 2 of 5"), std::string::npos) << f->summary;
}

// The cluster a RayService or RayJob makes was judged as its owner.
TEST(ClusterHeadNameRule, TheClusterOfARayServiceIsNotJudgedAgain) {
  RayObjectBuilder b(std::string(53, 'c'));
  b.Label("ray.io/originated-from-crd", "RayService");
  b.Head();
  EXPECT_FALSE(CheckClusterHeadName(b.object(), {}));
}

TEST(ClusterHeadNameRule, TheRequestNameStandsInForAMissingOne) {
  EXPECT_TRUE(Check("", RayObjectKind::kRayCluster, std::string(51, 'g')));
  EXPECT_FALSE(Check("", RayObjectKind::kRayCluster));
}

}  // namespace
}  // namespace ray_webhook
