#include "ray_webhook/duplicate_mount_rule.h"

#include <gtest/gtest.h>

#include "pod_builder.h"

namespace ray_webhook {
namespace {

using testing::PodBuilder;

TEST(CleanMountPath, NormalisesSlashesAndDots) {
  EXPECT_EQ(CleanMountPath("/dev/shm"), "/dev/shm");
  EXPECT_EQ(CleanMountPath("/dev/shm/"), "/dev/shm");
  EXPECT_EQ(CleanMountPath("//dev//shm///"), "/dev/shm");
  EXPECT_EQ(CleanMountPath("/dev/./shm"), "/dev/shm");
  EXPECT_EQ(CleanMountPath("/"), "/");
  EXPECT_EQ(CleanMountPath("/a/../b"), "/a/../b");
  EXPECT_EQ(CleanMountPath("rel/x/"), "rel/x");
}

TEST(DuplicateMountRule, UniquePathsPass) {
  PodBuilder b;
  b.Container("a").Mount("v1", "/data").Mount("v2", "/data2").Mount("v3", "/data/sub");
  EXPECT_FALSE(CheckDuplicateMounts(b.pod(), std::nullopt));
}

// The same path in two different containers is fine: uniqueness is per container.
TEST(DuplicateMountRule, SamePathInTwoContainersPasses) {
  PodBuilder b;
  b.Container("a").Mount("v", "/data").Container("b").Mount("v", "/data");
  EXPECT_FALSE(CheckDuplicateMounts(b.pod(), std::nullopt));
}

// KubeRay #688: "/dev/shm: must be unique" from a shallow-copied worker template (#714).
TEST(DuplicateMountRule, RayWorkerMessageNamesClusterGroupAndCause) {
  PodBuilder b;
  b.RayWorker("raycluster-kuberay", "workergroup").Container("ray-worker").Mount("shared-mem", "/dev/shm").Mount(
      "shared-mem", "/dev/shm");
  const auto denial = CheckDuplicateMounts(b.pod(), IdentifyRayPod(b.pod()));
  ASSERT_TRUE(denial);
  EXPECT_EQ(denial->code, 422);
  EXPECT_EQ(denial->rule, kDuplicateMountRule);
  const std::string& m = denial->message;
  EXPECT_NE(m.find("container \"ray-worker\" mounts \"/dev/shm\" 2 times"), std::string::npos) << m;
  EXPECT_NE(m.find("RayCluster \"raycluster-kuberay\""), std::string::npos) << m;
  EXPECT_NE(m.find("group \"workergroup\""), std::string::npos) << m;
  EXPECT_NE(m.find("shallow copy"), std::string::npos) << m;
}

TEST(DuplicateMountRule, NonRayMessageHasNoRayCause) {
  PodBuilder b;
  b.InitContainer("setup").Mount("a", "/data").Mount("b", "/data/").Mount("c", "/data");
  const auto denial = CheckDuplicateMounts(b.pod(), std::nullopt);
  ASSERT_TRUE(denial);
  EXPECT_NE(denial->message.find("init container \"setup\" mounts \"/data\" 3 times (volumes \"a\", \"b\", \"c\")"),
            std::string::npos)
      << denial->message;
  EXPECT_EQ(denial->message.find("RayCluster"), std::string::npos);
}

TEST(DuplicateMountRule, EphemeralContainersAreChecked) {
  PodBuilder b;
  b.EphemeralContainer("debugger").Mount("x", "/cache").Mount("y", "/cache");
  ASSERT_TRUE(CheckDuplicateMounts(b.pod(), std::nullopt));
}

TEST(DuplicateMountRule, EveryDuplicateIsReportedUpToABound) {
  PodBuilder b;
  b.Container("a");
  for (int i = 0; i < 8; ++i) b.Mount("v", "/p" + std::to_string(i)).Mount("w", "/p" + std::to_string(i));
  const auto denial = CheckDuplicateMounts(b.pod(), std::nullopt);
  ASSERT_TRUE(denial);
  EXPECT_NE(denial->message.find("\"/p0\""), std::string::npos);
  EXPECT_NE(denial->message.find("\"/p4\""), std::string::npos);
  EXPECT_EQ(denial->message.find("\"/p5\""), std::string::npos);
  EXPECT_NE(denial->message.find("and 3 more duplicated paths"), std::string::npos) << denial->message;
}

}  // namespace
}  // namespace ray_webhook
