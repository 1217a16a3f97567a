#include "ray_webhook/audit/suspended_loops.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

constexpr std::int64_t kNow = 1'800'000'000;

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

SuspendedClusterFacts SuspendedCluster(std::optional<std::int64_t> suspended_ago, std::int64_t created_ago) {
  SuspendedClusterFacts c;
  c.source = "dump.json item 2";
  c.created = kNow - created_ago;
  if (suspended_ago) c.suspended_since = kNow - *suspended_ago;
  c.requests = {3, 20, 2};
  return c;
}

ServiceSuspendFacts Service() {
  ServiceSuspendFacts s;
  s.namespace_name = "ml";
  s.name = "serve-chat";
  s.source = "dump.json item 1";
  s.pending_cluster = "serve-chat-raycluster-m5n6p";
  return s;
}

SuspendedJobFacts Job(std::int64_t started_ago) {
  SuspendedJobFacts j;
  j.namespace_name = "ml";
  j.name = "batch";
  j.source = "dump.json item 3";
  j.deployment_status = "Suspended";
  j.created = kNow - 86400;
  j.start_time = kNow - started_ago;
  return j;
}

SuspendedLoopFacts ServiceFacts(SuspendedClusterFacts cluster, ServiceSuspendFacts service = Service()) {
  SuspendedLoopFacts f;
  f.clusters[{"ml", "serve-chat-raycluster-m5n6p"}] = std::move(cluster);
  f.services.push_back(std::move(service));
  return f;
}

SuspendedLoopFacts JobFacts(SuspendedJobFacts job) {
  SuspendedLoopFacts f;
  f.jobs.push_back(std::move(job));
  return f;
}

TEST(SuspendedLoops, ARayServicesClusterLeftSuspendedPastTheLimitIsAFinding) {
  const auto found = SuspendedLoops(ServiceFacts(SuspendedCluster(3 * 3600, 86400)), kNow, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].rule, "suspended-loop");
  EXPECT_EQ(found[0].kind, "RayService");
  EXPECT_EQ(found[0].namespace_name, "ml");
  EXPECT_EQ(found[0].name, "serve-chat");
  EXPECT_EQ(found[0].field_path, "status.pendingServiceStatus.rayClusterName");
  EXPECT_EQ(found[0].source, "dump.json item 1");
  // Measured from the RayClusterSuspended condition, not from the cluster's creation a day ago.
  EXPECT_TRUE(found[0].message.starts_with(
      "RayService serve-chat's pending RayCluster serve-chat-raycluster-m5n6p has been suspended (spec.suspend "
      "true) for 3h 0m, though the RayService's spec asks for no suspension"))
      << found[0].message;
  EXPECT_TRUE(Has(found[0].message, "Running, it would ask for 3 Pod(s) requesting 20 CPU(s) and 2 GPU(s)."));
  EXPECT_TRUE(Has(found[0].message, "kuberay #4686"));
}

TEST(SuspendedLoops, TheActiveClusterToo) {
  ServiceSuspendFacts s = Service();
  s.active_cluster = s.pending_cluster;  // named twice: one finding
  EXPECT_EQ(SuspendedLoops(ServiceFacts(SuspendedCluster(3600, 3600), s), kNow, {}).size(), 1u);
  s.pending_cluster.clear();
  const auto found = SuspendedLoops(ServiceFacts(SuspendedCluster(3600, 3600), s), kNow, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].field_path, "status.activeServiceStatus.rayClusterName");
  EXPECT_TRUE(Has(found[0].message, "'s active RayCluster serve-chat-raycluster-m5n6p")) << found[0].message;
}

TEST(SuspendedLoops, WithinTheLimitNothingIsFound) {
  // 600 s by default: a finding from the 601st second on.
  EXPECT_TRUE(SuspendedLoops(ServiceFacts(SuspendedCluster(600, 86400)), kNow, {}).empty());
  EXPECT_EQ(SuspendedLoops(ServiceFacts(SuspendedCluster(601, 86400)), kNow, {}).size(), 1u);
  CostLeakLimits patient;
  patient.suspended_limit = std::chrono::hours(4);
  EXPECT_TRUE(SuspendedLoops(ServiceFacts(SuspendedCluster(3 * 3600, 86400)), kNow, patient).empty());
}

TEST(SuspendedLoops, WithoutTheConditionTheClustersCreationCounts) {
  const auto found = SuspendedLoops(ServiceFacts(SuspendedCluster(std::nullopt, 2 * 3600)), kNow, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(Has(found[0].message, "for 2h 0m (since its creation)")) << found[0].message;
  SuspendedClusterFacts untimed = SuspendedCluster(std::nullopt, 0);
  untimed.created.reset();
  EXPECT_TRUE(SuspendedLoops(ServiceFacts(untimed), kNow, {}).empty());
}

TEST(SuspendedLoops, ASpecAskingForSuspensionIsNoFinding) {
  ServiceSuspendFacts queued = Service();
  queued.cluster_config_suspend = true;  // spec.rayClusterConfig.suspend
  EXPECT_TRUE(SuspendedLoops(ServiceFacts(SuspendedCluster(86400, 86400), queued), kNow, {}).empty());
  ServiceSuspendFacts suspended = Service();
  suspended.spec_suspend = true;  // spec.suspend, KubeRay 1.7
  EXPECT_TRUE(SuspendedLoops(ServiceFacts(SuspendedCluster(86400, 86400), suspended), kNow, {}).empty());
}

TEST(SuspendedLoops, ADeletedOrGoneClusterIsNoFinding) {
  SuspendedClusterFacts deleting = SuspendedCluster(86400, 86400);
  deleting.deleting = true;
  EXPECT_TRUE(SuspendedLoops(ServiceFacts(deleting), kNow, {}).empty());
  ServiceSuspendFacts other = Service();
  other.pending_cluster = "serve-chat-raycluster-zzzzz";  // not suspended, or not in the dump
  EXPECT_TRUE(SuspendedLoops(ServiceFacts(SuspendedCluster(86400, 86400), other), kNow, {}).empty());
  ServiceSuspendFacts elsewhere = Service();
  elsewhere.namespace_name = "serving";
  EXPECT_TRUE(SuspendedLoops(ServiceFacts(SuspendedCluster(86400, 86400), elsewhere), kNow, {}).empty());
}

TEST(SuspendedLoops, ASuspendedRayJobWhoseSpecNoLongerAsksIsAFinding) {
  const auto found = SuspendedLoops(JobFacts(Job(2 * 3600)), kNow, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].kind, "RayJob");
  EXPECT_EQ(found[0].name, "batch");
  EXPECT_EQ(found[0].field_path, "status.jobDeploymentStatus");
  EXPECT_EQ(found[0].source, "dump.json item 3");
  EXPECT_TRUE(found[0].message.starts_with(
      "RayJob batch is Suspended though its spec.suspend is not true, for up to 2h 0m (the RayJob records no time "
      "of its suspension: since its status.startTime); it has no RayCluster. KubeRay moves a Suspended RayJob"))
      << found[0].message;
  EXPECT_TRUE(Has(found[0].message, "kuberay #4416"));
}

TEST(SuspendedLoops, ASuspendingRayJobNamesItsCluster) {
  SuspendedJobFacts j = Job(3600);
  j.deployment_status = "Suspending";
  j.cluster_name = "batch-raycluster-abcde";
  const auto found = SuspendedLoops(JobFacts(j), kNow, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(Has(found[0].message, "its RayCluster batch-raycluster-abcde is not deleted")) << found[0].message;
}

TEST(SuspendedLoops, ARayJobIsJudgedByItsLatestTime) {
  EXPECT_TRUE(SuspendedLoops(JobFacts(Job(600)), kNow, {}).empty());  // started 10m ago, created a day ago
  EXPECT_EQ(SuspendedLoops(JobFacts(Job(601)), kNow, {}).size(), 1u);
  SuspendedJobFacts unstarted = Job(0);
  unstarted.start_time.reset();
  const auto found = SuspendedLoops(JobFacts(unstarted), kNow, {});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_TRUE(Has(found[0].message,
                  "for up to 1d 0h (the RayJob records no time of its suspension: since its "
                  "creation)"))
      << found[0].message;
  unstarted.created.reset();
  EXPECT_TRUE(SuspendedLoops(JobFacts(unstarted), kNow, {}).empty());
}

TEST(SuspendedLoops, ARayJobAskingForSuspensionOrNotSuspendedIsNoFinding) {
  SuspendedJobFacts queued = Job(86400);
  queued.spec_suspend = true;
  EXPECT_TRUE(SuspendedLoops(JobFacts(queued), kNow, {}).empty());
  SuspendedJobFacts running = Job(86400);
  running.deployment_status = "Running";
  EXPECT_TRUE(SuspendedLoops(JobFacts(running), kNow, {}).empty());
}

TEST(NextSuspendedLoopDeadline, TheEarliestCandidateNotYetAFinding) {
  SuspendedLoopFacts f = ServiceFacts(SuspendedCluster(100, 86400));  // a finding at +501
  f.jobs.push_back(Job(300));                                         // at +301
  f.jobs.push_back(Job(7200));                                        // already a finding
  SuspendedJobFacts queued = Job(599);
  queued.spec_suspend = true;  // never
  f.jobs.push_back(queued);
  EXPECT_EQ(NextSuspendedLoopDeadline(f, kNow, {}), kNow + 301);
  EXPECT_TRUE(SuspendedLoops(f, kNow + 300, {}).size() == 1u);
  EXPECT_EQ(SuspendedLoops(f, kNow + 301, {}).size(), 2u);
  EXPECT_EQ(NextSuspendedLoopDeadline(f, kNow + 301, {}), kNow + 501);
  EXPECT_EQ(NextSuspendedLoopDeadline(f, kNow + 501, {}), std::nullopt);
  EXPECT_EQ(NextSuspendedLoopDeadline({}, kNow, {}), std::nullopt);
}

}  // namespace
}  // namespace ray_webhook
