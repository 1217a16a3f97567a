#include "core/decode/ray_object_decoder.h"

#include <gtest/gtest.h>

#include "support/bare_object.h"

namespace ray_webhook {
namespace {

using testing::BareObject;
using testing::ReviewObject;

JsonReader Decode(BareObject& bare, const nlohmann::json& object, RayObjectKind kind, RayObject* out) {
  return bare.Walk(object.dump(), [&](od::object root, JsonReader& r) { DecodeRayObject(root, r, kind, *out); });
}

TEST(RayObjectDecoder, ARayClusterCarriesItsSpecAsTheClusterSpec) {
  BareObject bare;
  RayObject o;
  const JsonReader r =
      Decode(bare, ReviewObject("reviews/raycluster-token-dupmount.json"), RayObjectKind::kRayCluster, &o);
  ASSERT_FALSE(r.failed()) << r.error();
  EXPECT_EQ(o.kind, RayObjectKind::kRayCluster);
  EXPECT_EQ(o.metadata.name, "raycluster-auth");
  ASSERT_TRUE(o.cluster);
  EXPECT_TRUE(o.cluster->K8sTokenAuth());
  EXPECT_EQ(o.cluster->worker_groups.at(0).group_name, "workergroup");
  EXPECT_FALSE(o.uses_cluster_selector);
}

TEST(RayObjectDecoder, RayJobsAndRayServicesCarryTheirClusterSpecNested) {
  BareObject bare;
  RayObject job;
  ASSERT_FALSE(Decode(bare, ReviewObject("reviews/rayjob-dupmount.json"), RayObjectKind::kRayJob, &job).failed());
  EXPECT_EQ(job.kind, RayObjectKind::kRayJob);
  ASSERT_TRUE(job.cluster);
  EXPECT_EQ(job.cluster->worker_groups.at(0).group_name, "small-group");

  RayObject selector;
  ASSERT_FALSE(
      Decode(bare, ReviewObject("reviews/rayjob-cluster-selector.json"), RayObjectKind::kRayJob, &selector).failed());
  EXPECT_TRUE(selector.uses_cluster_selector);
  EXPECT_FALSE(selector.cluster);

  RayObject service;
  ASSERT_FALSE(
      Decode(bare, ReviewObject("reviews/rayservice-sample.json"), RayObjectKind::kRayService, &service).failed());
  EXPECT_EQ(service.kind, RayObjectKind::kRayService);
  ASSERT_TRUE(service.cluster);
  EXPECT_EQ(Lookup(service.cluster->head_group.ray_start_params, "num-cpus"), "0");
}

// Each kind looks for the cluster spec where it keeps it, and only there.
TEST(RayObjectDecoder, EachKindReadsItsOwnField) {
  BareObject bare;
  const nlohmann::json job = ReviewObject("reviews/rayjob-dupmount.json");
  RayObject as_service;
  ASSERT_FALSE(Decode(bare, job, RayObjectKind::kRayService, &as_service).failed());
  EXPECT_FALSE(as_service.cluster);
  RayObject as_cluster;
  ASSERT_FALSE(Decode(bare, job, RayObjectKind::kRayCluster, &as_cluster).failed());
  ASSERT_TRUE(as_cluster.cluster);
  EXPECT_TRUE(as_cluster.cluster->worker_groups.empty());  // a RayJob's spec has no workerGroupSpecs of its own
}

TEST(RayObjectDecoder, ErrorsAreRelativeToTheObject) {
  BareObject bare;
  RayObject o;
  nlohmann::json cluster = ReviewObject("reviews/raycluster-update-new-finding.json");
  cluster["spec"]["workerGroupSpecs"] = "oops";
  EXPECT_EQ(Decode(bare, cluster, RayObjectKind::kRayCluster, &o).error(), "spec.workerGroupSpecs: expected an array");
  nlohmann::json job = ReviewObject("reviews/rayjob-dupmount.json");
  job["spec"]["rayClusterSpec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["name"] = 1;
  EXPECT_EQ(Decode(bare, job, RayObjectKind::kRayJob, &o).error(),
            "spec.rayClusterSpec.headGroupSpec.template.spec.containers[0].name: expected a string");
  job["spec"]["clusterSelector"] = {{"a", 1}};
  job["spec"].erase("rayClusterSpec");
  EXPECT_EQ(Decode(bare, job, RayObjectKind::kRayJob, &o).error(), "spec.clusterSelector: expected string values");
  nlohmann::json service = ReviewObject("reviews/rayservice-sample.json");
  service["spec"]["rayClusterConfig"] = 1;
  EXPECT_EQ(Decode(bare, service, RayObjectKind::kRayService, &o).error(), "spec.rayClusterConfig: expected an object");
}

// Each object is decoded fresh.
TEST(RayObjectDecoder, NothingOfThePreviousObjectSurvives) {
  BareObject bare;
  RayObject o;
  ASSERT_FALSE(
      Decode(bare, ReviewObject("reviews/raycluster-token-dupmount.json"), RayObjectKind::kRayCluster, &o).failed());
  ASSERT_FALSE(Decode(bare, {{"metadata", {{"name", "x"}}}}, RayObjectKind::kRayJob, &o).failed());
  EXPECT_EQ(o.kind, RayObjectKind::kRayJob);
  EXPECT_EQ(o.metadata.name, "x");
  EXPECT_TRUE(o.metadata.labels.empty());
  EXPECT_FALSE(o.cluster);
}

}  // namespace
}  // namespace ray_webhook
