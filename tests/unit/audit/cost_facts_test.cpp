#include "ray_webhook/audit/cost_facts.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

TEST(ParseRfc3339, UtcTimesAsTheApiServerWritesThem) {
  EXPECT_EQ(ParseRfc3339("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(ParseRfc3339("2026-12-05T10:00:00Z"), 1796464800);
  EXPECT_EQ(ParseRfc3339("2000-02-29T23:59:59Z"), 951868799);  // a leap day of a year divisible by 400
  EXPECT_EQ(ParseRfc3339("1969-12-31T23:59:59Z"), -1);
}

TEST(ParseRfc3339, FractionsAndOffsetsAsRfc3339AllowsThem) {
  EXPECT_EQ(ParseRfc3339("2026-12-05T10:00:00.123456Z"), 1796464800);  // metav1.MicroTime
  EXPECT_EQ(ParseRfc3339("2026-12-05T12:00:00+02:00"), 1796464800);
  EXPECT_EQ(ParseRfc3339("2026-12-05T05:30:00-04:30"), 1796464800);
  EXPECT_EQ(ParseRfc3339("2026-12-05t10:00:00z"), 1796464800);
}

TEST(ParseRfc3339, AnythingElseIsNoTime) {
  for (const char* bad : {"", "2026-12-05", "2026-12-05T10:00:00", "2026-12-05 10:00:00Z", "2026-13-05T10:00:00Z",
                          "2026-02-29T10:00:00Z", "2026-12-05T24:00:00Z", "2026-12-05T10:00:00.Z",
                          "2026-12-05T10:00:00+0200", "2026-12-05T10:00:00Zjunk", "null"}) {
    EXPECT_FALSE(ParseRfc3339(bad)) << bad;
  }
}

TEST(ParseQuantity, DecimalAndBinarySuffixes) {
  EXPECT_EQ(ParseQuantity("2"), 2.0);
  EXPECT_EQ(ParseQuantity("500m"), 0.5);
  EXPECT_EQ(ParseQuantity("1.5"), 1.5);
  EXPECT_EQ(ParseQuantity("4k"), 4000.0);
  EXPECT_EQ(ParseQuantity("1Ki"), 1024.0);
  EXPECT_EQ(ParseQuantity("1e3"), 1000.0);
  EXPECT_EQ(ParseQuantity("2E"), 2e18);  // exa, not an exponent
  EXPECT_FALSE(ParseQuantity(""));
  EXPECT_FALSE(ParseQuantity("-1"));
  EXPECT_FALSE(ParseQuantity("2 cores"));
  EXPECT_FALSE(ParseQuantity("m"));
}

Container Requesting(std::vector<std::pair<std::string_view, std::string_view>> requests,
                     std::vector<std::pair<std::string_view, std::string_view>> limits = {}) {
  Container c;
  c.requests = std::move(requests);
  c.limits = std::move(limits);
  return c;
}

TEST(RequestsOf, TheHeadAndEveryWorkerAtItsReplicasLimitsStandingForMissingRequests) {
  RayClusterSpecView spec;
  spec.has_head_group = true;
  spec.head_group.template_pod.containers = {Requesting({{"cpu", "4"}, {"memory", "8Gi"}})};
  RayGroupSpec gpu;
  gpu.replicas = 2;
  gpu.num_of_hosts = 2;  // multi-host: each replica is two Pods
  gpu.template_pod.containers = {Requesting({{"cpu", "8"}}, {{"cpu", "16"}, {"nvidia.com/gpu", "1"}}),
                                 Requesting({{"cpu", "500m"}})};
  RayGroupSpec scaled_up;  // replicas below minReplicas: KubeRay runs minReplicas
  scaled_up.replicas = 0;
  scaled_up.min_replicas = 1;
  scaled_up.template_pod.containers = {Requesting({{"amd.com/gpu", "2"}, {"cpu", "1"}})};
  RayGroupSpec suspended;
  suspended.replicas = 5;
  suspended.suspend = true;
  suspended.template_pod.containers = {Requesting({{"cpu", "100"}})};
  spec.worker_groups = {gpu, scaled_up, suspended};
  const ClusterRequests r = RequestsOf(spec);
  EXPECT_EQ(r.pods, 1 + 4 + 1);
  EXPECT_DOUBLE_EQ(r.cpus, 4 + 4 * 8.5 + 1);
  EXPECT_DOUBLE_EQ(r.gpus, 4 * 1 + 2);
}

TEST(RequestsOf, AnInitContainerCountsWhenItAsksForMoreThanTheContainers) {
  RayClusterSpecView spec;
  spec.has_head_group = true;
  spec.head_group.template_pod.containers = {Requesting({{"cpu", "1"}})};
  spec.head_group.template_pod.init_containers = {Requesting({{"cpu", "3"}}), Requesting({{"cpu", "2"}})};
  EXPECT_DOUBLE_EQ(RequestsOf(spec).cpus, 3);
  EXPECT_EQ(RequestsOf(RayClusterSpecView{}).pods, 0);
}

}  // namespace
}  // namespace ray_webhook
