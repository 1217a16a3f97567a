// Cost leaks: what KubeRay leaves running once nothing needs it, which shows
// only across objects and over time.
//
// Contract: pure; `now` is given (Unix seconds). From the facts the audit
// keeps of each RayJob, RayService and RayCluster:
//  - finished-job-cluster: a RayJob whose status.jobDeploymentStatus is
//    Complete or Failed (KubeRay v1.6.2, rayjob_types.go), that made its own
//    RayCluster (no spec.clusterSelector), whose RayCluster
//    (status.rayClusterName) still exists and is not being deleted,
//    `finished_job_grace` after status.endTime plus the job's own
//    ttlSecondsAfterFinished when shutdownAfterJobFinishes is set. KubeRay
//    deletes that cluster by then, unless the job keeps it
//    (shutdownAfterJobFinishes false) or its deletion rules match nothing
//    (kuberay #5184: eight-GPU clusters kept for ten days).
//  - stuck-upgrade: a RayService whose pending RayCluster
//    (status.pendingServiceStatus.rayClusterName) was created more than
//    `pending_cluster_limit` ago and is still pending: both the new and the
//    active cluster run, and KubeRay waits for the new one forever
//    (kuberay #5088). A suspended pending cluster holds nothing and is the
//    suspended-loop rule's (suspended_loops.h), not this one's.
// Each finding names the RayCluster, its age or the time since the job
// ended, and what it holds: Pods, CPUs and GPUs requested, the head's and
// every worker group's at its replicas. Objects whose times are unknown are
// not judged.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ray_webhook/audit/audit_report.h"

namespace ray_webhook {

inline constexpr std::string_view kFinishedJobClusterRule = "finished-job-cluster";
inline constexpr std::string_view kStuckUpgradeRule = "stuck-upgrade";

// A rule over time: its findings' messages say how long (a cost leak's age),
// so they change with the time alone.
bool RuleJudgedOverTime(std::string_view rule);

// What a RayCluster asks for while it runs.
struct ClusterRequests {
  std::int64_t pods = 0;
  double cpus = 0;
  double gpus = 0;  // every resource named "<vendor>/gpu"
};

struct RayClusterFacts {
  std::string source;
  std::optional<std::int64_t> created;  // metadata.creationTimestamp
  bool deleting = false;                // metadata.deletionTimestamp is set
  ClusterRequests requests;
  bool suspended = false;  // spec.suspend: no Pods, nothing held (the suspended-loop rule's case)
};

struct RayJobFacts {
  std::string namespace_name, name, source;
  std::string deployment_status;  // status.jobDeploymentStatus
  std::optional<std::int64_t> end_time;
  std::string cluster_name;  // status.rayClusterName
  bool uses_cluster_selector = false;
  bool shutdown_after_job_finishes = false;
  std::int64_t ttl_seconds_after_finished = 0;
};

struct RayServiceFacts {
  std::string namespace_name, name, source;
  std::string active_cluster;   // status.activeServiceStatus.rayClusterName
  std::string pending_cluster;  // status.pendingServiceStatus.rayClusterName
};

struct CostLeakLimits {
  // Beyond KubeRay's own wait: its reconcile requeues and the deletion's grace period.
  std::chrono::seconds finished_job_grace{std::chrono::minutes(10)};
  // A new cluster of a RayService is usually ready within minutes; RayService's own
  // serviceUnhealthySecondThreshold (900 s by default, deprecated since 1.3) is the nearest limit KubeRay had.
  std::chrono::seconds pending_cluster_limit{std::chrono::minutes(30)};
  // suspended-loop (suspended_loops.h): KubeRay requeues a RayJob every 3 s and a RayCluster or
  // RayService every 2 s, and acts on a changed spec at once; 10 minutes is hundreds of reconciles.
  std::chrono::seconds suspended_limit{std::chrono::minutes(10)};
};

using ClusterKey = std::pair<std::string, std::string>;  // (namespace, name)

std::vector<AuditFinding> FinishedJobClusters(const std::vector<RayJobFacts>& jobs,
                                              const std::map<ClusterKey, RayClusterFacts>& clusters, std::int64_t now,
                                              const CostLeakLimits& limits);

std::vector<AuditFinding> StuckUpgrades(const std::vector<RayServiceFacts>& services,
                                        const std::map<ClusterKey, RayClusterFacts>& clusters, std::int64_t now,
                                        const CostLeakLimits& limits);

// The earliest time after `now` at which one of these rules would find what it
// does not find at `now`, the objects unchanged; nullopt when none would.
std::optional<std::int64_t> NextCostLeakDeadline(const std::vector<RayJobFacts>& jobs,
                                                 const std::vector<RayServiceFacts>& services,
                                                 const std::map<ClusterKey, RayClusterFacts>& clusters,
                                                 std::int64_t now, const CostLeakLimits& limits);

// "3d 4h", "2h 5m", "12m", "40s": how long, for a message.
std::string ShowAge(std::int64_t seconds);

// "3 Pod(s) requesting 24 CPU(s) and 16 GPU(s)": what a cluster asks for, for a message.
std::string Holds(const ClusterRequests& requests);

}  // namespace ray_webhook
