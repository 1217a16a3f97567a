#include "ray_webhook/core/model/ray_cluster_spec.h"

#include <gtest/gtest.h>

#include "ray_webhook/core/pod/template_finding.h"
#include "support/ray_object_builder.h"

namespace ray_webhook {
namespace {

using testing::RayObjectBuilder;

TEST(RayClusterSpec, KindsOfRayIoOnly) {
  EXPECT_EQ(RayObjectKindOf({"ray.io", "v1", "RayCluster"}), RayObjectKind::kRayCluster);
  EXPECT_EQ(RayObjectKindOf({"ray.io", "v1alpha1", "RayJob"}), RayObjectKind::kRayJob);
  EXPECT_EQ(RayObjectKindOf({"ray.io", "v1", "RayService"}), RayObjectKind::kRayService);
  EXPECT_EQ(RayObjectKindOf({"ray.io", "v1", "RayCronJob"}), RayObjectKind::kRayCronJob);
  EXPECT_FALSE(RayObjectKindOf({"ray.io", "v1alpha1", "RayCronJob"}));  // served as v1 only
  EXPECT_FALSE(RayObjectKindOf({"ray.io", "v2", "RayCluster"}));
  EXPECT_FALSE(RayObjectKindOf({"example.com", "v1", "RayCluster"}));
  EXPECT_FALSE(RayObjectKindOf({"", "v1", "Pod"}));
  EXPECT_EQ(RayObjectKindName(RayObjectKind::kRayService), "RayService");
}

TEST(RayClusterSpec, GroupsInOrderWithTheirPaths) {
  RayObjectBuilder b("job", RayObjectKind::kRayJob);
  b.Head();
  b.Worker("small");
  b.Worker("large");
  const auto groups = TemplateGroups(b.object());
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].name, "headgroup");
  EXPECT_EQ(groups[0].node_type, RayNodeType::kHead);
  EXPECT_EQ(groups[0].path, "spec.rayClusterSpec.headGroupSpec");
  EXPECT_EQ(groups[2].name, "large");
  EXPECT_EQ(groups[2].path, "spec.rayClusterSpec.workerGroupSpecs[1]");
  EXPECT_EQ(ClusterSpecPath(RayObjectKind::kRayCluster), "spec");
  EXPECT_EQ(ClusterSpecPath(RayObjectKind::kRayService), "spec.rayClusterConfig");
}

}  // namespace
}  // namespace ray_webhook
