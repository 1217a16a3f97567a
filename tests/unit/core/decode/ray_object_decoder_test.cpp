#include "core/decode/ray_object_decoder.h"

#include <gtest/gtest.h>

#include "support/bare_object.h"

namespace ray_webhook {
namespace {

using testing::BareObject;
using testing::ReviewObject;

JsonReader Decode(BareObject& bare, const nlohmann::json& object, RayObjectKind kind, RayObject* out,
                  bool read_resources = false) {
  return bare.Walk(object.dump(),
                   [&](od::object root, JsonReader& r) { DecodeRayObject(root, r, kind, *out, read_resources); });
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

// What the audit's cost-leak rules read: a RayJob's run, as KubeRay v1.6.2 writes its status.
TEST(RayObjectDecoder, ARayJobKeepsItsRunAndItsClusterTimes) {
  BareObject bare;
  nlohmann::json job = ReviewObject("reviews/rayjob-dupmount.json");
  job["metadata"]["creationTimestamp"] = "2026-12-03T06:55:00Z";
  job["spec"]["shutdownAfterJobFinishes"] = true;
  job["spec"]["ttlSecondsAfterFinished"] = 60;
  job["status"] = {{"jobDeploymentStatus", "Complete"},          {"jobStatus", "SUCCEEDED"},
                   {"rayClusterName", "train-raycluster-x7k2p"}, {"startTime", "2026-12-03T06:55:04Z"},
                   {"endTime", "2026-12-03T08:00:00Z"},          {"rayClusterStatus", {{"state", "ready"}}}};
  RayObject o;
  const JsonReader r = Decode(bare, job, RayObjectKind::kRayJob, &o);
  ASSERT_FALSE(r.failed()) << r.error();
  EXPECT_EQ(o.metadata.creation_timestamp, "2026-12-03T06:55:00Z");
  EXPECT_FALSE(o.metadata.deletion_requested);
  EXPECT_EQ(o.job.deployment_status, "Complete");
  EXPECT_EQ(o.job.end_time, "2026-12-03T08:00:00Z");
  EXPECT_EQ(o.job.cluster_name, "train-raycluster-x7k2p");
  EXPECT_TRUE(o.job.shutdown_after_job_finishes);
  EXPECT_EQ(o.job.ttl_seconds_after_finished, 60);
}

TEST(RayObjectDecoder, ARayServiceKeepsItsActiveAndPendingClusters) {
  BareObject bare;
  nlohmann::json service = ReviewObject("reviews/rayservice-sample.json");
  service["status"] = {{"activeServiceStatus", {{"rayClusterName", "serve-a1b2c"}, {"applicationStatuses", nullptr}}},
                       {"pendingServiceStatus", {{"rayClusterName", "serve-d3e4f"}}},
                       {"serviceStatus", "Running"}};
  RayObject o;
  ASSERT_FALSE(Decode(bare, service, RayObjectKind::kRayService, &o).failed());
  EXPECT_EQ(o.service.active_cluster, "serve-a1b2c");
  EXPECT_EQ(o.service.pending_cluster, "serve-d3e4f");
  EXPECT_TRUE(o.job.deployment_status.empty());
}

// The status is the API server's, and these fields serve the audit alone: a value of the wrong type
// reads as absent and is no admission error.
TEST(RayObjectDecoder, AMalformedStatusOrTimeReadsAsAbsent) {
  BareObject bare;
  nlohmann::json job = ReviewObject("reviews/rayjob-dupmount.json");
  job["metadata"]["creationTimestamp"] = 5;
  job["metadata"]["deletionTimestamp"] = "2026-12-04T11:01:00Z";
  job["spec"]["shutdownAfterJobFinishes"] = "yes";
  job["spec"]["ttlSecondsAfterFinished"] = 1.5;
  job["status"] = {{"jobDeploymentStatus", 3}, {"endTime", {{"t", 1}}}, {"rayClusterName", {"x"}}};
  RayObject o;
  const JsonReader r = Decode(bare, job, RayObjectKind::kRayJob, &o);
  ASSERT_FALSE(r.failed()) << r.error();
  EXPECT_TRUE(o.metadata.creation_timestamp.empty());
  EXPECT_TRUE(o.metadata.deletion_requested);
  EXPECT_TRUE(o.job.deployment_status.empty() && o.job.end_time.empty() && o.job.cluster_name.empty());
  EXPECT_FALSE(o.job.shutdown_after_job_finishes);
  EXPECT_EQ(o.job.ttl_seconds_after_finished, 0);
  job["status"] = "Complete";
  ASSERT_FALSE(Decode(bare, job, RayObjectKind::kRayJob, &o).failed());
  nlohmann::json service = ReviewObject("reviews/rayservice-sample.json");
  service["status"] = {{"pendingServiceStatus", "serve-d3e4f"}, {"activeServiceStatus", {{"rayClusterName", 7}}}};
  ASSERT_FALSE(Decode(bare, service, RayObjectKind::kRayService, &o).failed());
  EXPECT_TRUE(o.service.pending_cluster.empty() && o.service.active_cluster.empty());
}

// What a cluster holds, for the audit: each worker group's replicas and each template container's
// resources; a review reads no resources.
TEST(RayObjectDecoder, TemplatesKeepTheirResourcesAndWorkerGroupsTheirReplicas) {
  BareObject bare;
  nlohmann::json cluster = ReviewObject("reviews/raycluster-sample.json");
  nlohmann::json& worker = cluster["spec"]["workerGroupSpecs"][0];
  worker["replicas"] = 3;
  worker["minReplicas"] = 1;
  worker["numOfHosts"] = 2;
  worker["suspend"] = true;
  worker["template"]["spec"]["containers"][0]["resources"] = {
      {"requests", {{"cpu", "500m"}, {"memory", "2Gi"}}},
      {"limits", {{"cpu", 2}, {"nvidia.com/gpu", "1"}, {"x", true}}}};
  cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"] = "none";
  RayObject o;
  ASSERT_FALSE(Decode(bare, cluster, RayObjectKind::kRayCluster, &o).failed());
  EXPECT_TRUE(o.cluster->worker_groups.at(0).template_pod.containers.at(0).requests.empty());
  const JsonReader r = Decode(bare, cluster, RayObjectKind::kRayCluster, &o, /*read_resources=*/true);
  ASSERT_FALSE(r.failed()) << r.error();
  const RayGroupSpec& g = o.cluster->worker_groups.at(0);
  EXPECT_EQ(g.replicas, 3);
  EXPECT_EQ(g.min_replicas, 1);
  EXPECT_EQ(g.num_of_hosts, 2);
  EXPECT_TRUE(g.suspend);
  const Container& c = g.template_pod.containers.at(0);
  ASSERT_EQ(c.requests.size(), 2u);
  EXPECT_EQ(Lookup(c.requests, "cpu"), "500m");
  ASSERT_EQ(c.limits.size(), 2u);  // the boolean is no quantity
  EXPECT_EQ(Lookup(c.limits, "cpu"), "2");
  EXPECT_EQ(Lookup(c.limits, "nvidia.com/gpu"), "1");
  EXPECT_TRUE(o.cluster->head_group.template_pod.containers.at(0).requests.empty());
  worker["replicas"] = "3";
  ASSERT_FALSE(Decode(bare, cluster, RayObjectKind::kRayCluster, &o, true).failed());
  EXPECT_FALSE(o.cluster->worker_groups.at(0).replicas);
}

// The suspended-loop rule's fields: a RayCluster's spec.suspend and RayClusterSuspended condition for the
// audit alone (a review reads neither), a RayJob's spec.suspend and status.startTime, a RayService's
// spec.suspend and spec.rayClusterConfig.suspend; each lenient.
TEST(RayObjectDecoder, TheSuspensionOfEachKindIsReadForTheAudit) {
  BareObject bare;
  nlohmann::json cluster = ReviewObject("reviews/raycluster-sample.json");
  cluster["spec"]["suspend"] = true;
  cluster["status"] = {
      {"state", "suspended"},
      {"conditions",
       {{{"type", "RayClusterSuspending"}, {"status", "False"}, {"lastTransitionTime", "2026-12-05T07:00:00Z"}},
        "not a condition",
        {{"lastTransitionTime", "2026-12-05T07:00:01Z"}, {"status", "True"}, {"type", "RayClusterSuspended"}}}}};
  RayObject o;
  ASSERT_FALSE(Decode(bare, cluster, RayObjectKind::kRayCluster, &o).failed());
  EXPECT_FALSE(o.cluster->suspend);
  EXPECT_TRUE(o.cluster_state.suspended_since.empty());
  JsonReader r = Decode(bare, cluster, RayObjectKind::kRayCluster, &o, /*read_resources=*/true);
  ASSERT_FALSE(r.failed()) << r.error();
  EXPECT_TRUE(o.cluster->suspend);
  EXPECT_EQ(o.cluster_state.suspended_since, "2026-12-05T07:00:01Z");
  // Not True: not suspended since then. Malformed: absent.
  cluster["status"]["conditions"][2]["status"] = "False";
  ASSERT_FALSE(Decode(bare, cluster, RayObjectKind::kRayCluster, &o, true).failed());
  EXPECT_TRUE(o.cluster_state.suspended_since.empty());
  cluster["spec"]["suspend"] = "true";
  cluster["status"]["conditions"] = {{"type", "RayClusterSuspended"}};
  ASSERT_FALSE(Decode(bare, cluster, RayObjectKind::kRayCluster, &o, true).failed());
  EXPECT_FALSE(o.cluster->suspend);
  EXPECT_TRUE(o.cluster_state.suspended_since.empty());

  nlohmann::json job = ReviewObject("reviews/rayjob-dupmount.json");
  job["spec"]["suspend"] = true;
  job["status"] = {{"jobDeploymentStatus", "Suspended"}, {"startTime", "2026-12-05T08:00:00Z"}};
  r = Decode(bare, job, RayObjectKind::kRayJob, &o);
  ASSERT_FALSE(r.failed()) << r.error();
  EXPECT_TRUE(o.job.suspend);
  EXPECT_EQ(o.job.start_time, "2026-12-05T08:00:00Z");
  job["spec"]["suspend"] = 1;
  job["status"]["startTime"] = 1;
  ASSERT_FALSE(Decode(bare, job, RayObjectKind::kRayJob, &o).failed());
  EXPECT_FALSE(o.job.suspend);
  EXPECT_TRUE(o.job.start_time.empty());

  nlohmann::json service = ReviewObject("reviews/rayservice-sample.json");
  service["spec"]["suspend"] = true;
  service["spec"]["rayClusterConfig"]["suspend"] = true;
  ASSERT_FALSE(Decode(bare, service, RayObjectKind::kRayService, &o, true).failed());
  EXPECT_TRUE(o.service.suspend);
  EXPECT_TRUE(o.cluster->suspend);
  service["spec"]["suspend"] = "no";
  service["spec"]["rayClusterConfig"].erase("suspend");
  ASSERT_FALSE(Decode(bare, service, RayObjectKind::kRayService, &o, true).failed());
  EXPECT_FALSE(o.service.suspend);
  EXPECT_FALSE(o.cluster->suspend);
}

}  // namespace
}  // namespace ray_webhook
