#include "ray_webhook/audit/cost_leaks.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

constexpr std::int64_t kNow = 1'800'000'000;

RayJobFacts FinishedJob(std::int64_t ended_ago) {
  RayJobFacts j;
  j.namespace_name = "ml";
  j.name = "train";
  j.source = "dump.json item 1";
  j.deployment_status = "Complete";
  j.end_time = kNow - ended_ago;
  j.cluster_name = "train-raycluster-abcde";
  j.shutdown_after_job_finishes = true;
  j.ttl_seconds_after_finished = 60;
  return j;
}

std::map<ClusterKey, RayClusterFacts> Clusters() {
  RayClusterFacts c;
  c.source = "dump.json item 2";
  c.created = kNow - 10 * 86400;
  c.requests = {3, 24, 16};
  RayClusterFacts fresh;
  fresh.created = kNow - 3600;
  fresh.requests = {2, 8, 0};
  return {{{"ml", "train-raycluster-abcde"}, c}, {{"ml", "serve-new"}, fresh}, {{"ml", "serve-old"}, c}};
}

TEST(FinishedJobClusters, AFinishedJobsClusterStillRunningAfterTheGraceIsAFinding) {
  const auto found = FinishedJobClusters({FinishedJob(3 * 86400 + 2 * 3600)}, Clusters(), kNow, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, "finished-job-cluster");
  EXPECT_EQ(found[0].kind, "RayJob");
  EXPECT_EQ(found[0].name, "train");
  EXPECT_EQ(found[0].source, "dump.json item 1");
  EXPECT_TRUE(found[0].message.starts_with(
      "RayJob train ended Complete 3d 2h ago, and its RayCluster train-raycluster-abcde still runs: 3 Pod(s) "
      "requesting 24 CPU(s) and 16 GPU(s). KubeRay"))
      << found[0].message;
  EXPECT_NE(found[0].message.find("kuberay #5184"), std::string::npos);
}

TEST(FinishedJobClusters, WithinKubeRaysOwnWaitAndTheGraceNothingIsFound) {
  // ttl 60 s + 600 s of grace.
  EXPECT_TRUE(FinishedJobClusters({FinishedJob(659)}, Clusters(), kNow, {}).empty());
  EXPECT_EQ(FinishedJobClusters({FinishedJob(661)}, Clusters(), kNow, {}).size(), 1u);
  RayJobFacts kept = FinishedJob(601);
  kept.shutdown_after_job_finishes = false;  // KubeRay would not delete it: only the grace applies
  const auto found = FinishedJobClusters({kept}, Clusters(), kNow, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("shutdownAfterJobFinishes is not set"), std::string::npos);
}

TEST(FinishedJobClusters, RunningSelectorDeletedOrGoneClustersAreNotFindings) {
  RayJobFacts running = FinishedJob(86400);
  running.deployment_status = "Running";
  RayJobFacts selector = FinishedJob(86400);
  selector.uses_cluster_selector = true;
  RayJobFacts gone = FinishedJob(86400);
  gone.cluster_name = "deleted-already";
  RayJobFacts unknown_end = FinishedJob(86400);
  unknown_end.end_time.reset();
  auto clusters = Clusters();
  EXPECT_TRUE(FinishedJobClusters({running, selector, gone, unknown_end}, clusters, kNow, {}).empty());
  clusters.at({"ml", "train-raycluster-abcde"}).deleting = true;
  EXPECT_TRUE(FinishedJobClusters({FinishedJob(86400)}, clusters, kNow, {}).empty());
  RayJobFacts failed = FinishedJob(86400);
  failed.deployment_status = "Failed";
  EXPECT_EQ(FinishedJobClusters({failed}, Clusters(), kNow, {}).size(), 1u);
}

TEST(StuckUpgrades, APendingClusterOlderThanTheLimitNamesBothClusters) {
  const RayServiceFacts s{"ml", "serve", "API rayservices page 1", "serve-old", "serve-new"};
  const auto found = StuckUpgrades({s}, Clusters(), kNow, {});  // pending for 1h; the limit is 30m
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, "stuck-upgrade");
  EXPECT_EQ(found[0].field_path, "status.pendingServiceStatus.rayClusterName");
  EXPECT_TRUE(found[0].message.starts_with(
      "RayService serve's new RayCluster serve-new has been pending for 1h 0m (2 Pod(s) requesting 8 CPU(s)), "
      "beside its active RayCluster serve-old (3 Pod(s) requesting 24 CPU(s) and 16 GPU(s)). KubeRay"))
      << found[0].message;
  CostLeakLimits patient;
  patient.pending_cluster_limit = std::chrono::hours(2);
  EXPECT_TRUE(StuckUpgrades({s}, Clusters(), kNow, patient).empty());
}

TEST(StuckUpgrades, NoPendingClusterOrOneAlreadyGoneIsNoFinding) {
  EXPECT_TRUE(StuckUpgrades({{"ml", "serve", "", "serve-old", ""}}, Clusters(), kNow, {}).empty());
  EXPECT_TRUE(StuckUpgrades({{"ml", "serve", "", "serve-old", "never-made"}}, Clusters(), kNow, {}).empty());
}

TEST(StuckUpgrades, ASuspendedPendingClusterIsTheSuspendedLoopRulesNotThisOnes) {
  std::map<ClusterKey, RayClusterFacts> clusters = Clusters();
  clusters.at({"ml", "serve-new"}).suspended = true;  // kuberay #4686: it holds nothing, and is stuck otherwise
  const RayServiceFacts s{"ml", "serve", "", "serve-old", "serve-new"};
  EXPECT_TRUE(StuckUpgrades({s}, clusters, kNow, {}).empty());
  EXPECT_FALSE(NextCostLeakDeadline({}, {s}, clusters, kNow - 3600, {}).has_value());
}

TEST(ShowAge, DaysHoursMinutesSeconds) {
  EXPECT_EQ(ShowAge(3 * 86400 + 4 * 3600 + 59), "3d 4h");
  EXPECT_EQ(ShowAge(2 * 3600 + 5 * 60), "2h 5m");
  EXPECT_EQ(ShowAge(720), "12m");
  EXPECT_EQ(ShowAge(40), "40s");
  EXPECT_EQ(ShowAge(-5), "0s");
}

}  // namespace
}  // namespace ray_webhook
