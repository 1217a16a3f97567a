// suspended-loop: a RayService or RayJob whose spec no longer asks for
// suspension while what KubeRay made for it stays suspended, so it neither
// serves nor runs while KubeRay keeps reconciling it (kuberay #4686, #4416).
//
// Contract: pure; `now` is given (Unix seconds). Field names and condition
// types: raycluster_types.go, rayservice_types.go, rayjob_types.go and
// rayjob_controller.go under ray-operator/ (apis/ray/v1, controllers/ray) at
// KubeRay v1.6.2 and v1.7.0. A finding, with the limit
// CostLeakLimits::suspended_limit:
//  - RayService: its spec asks for no suspension (neither spec.suspend, new in
//    v1.7.0, nor spec.rayClusterConfig.suspend is true), yet a RayCluster it
//    names (status.pendingServiceStatus.rayClusterName or
//    status.activeServiceStatus.rayClusterName) exists, is not being deleted
//    and has spec.suspend true, for longer than the limit: measured from that
//    cluster's condition RayClusterSuspended's lastTransitionTime when its
//    status is "True", else from the cluster's creationTimestamp (a cluster
//    created suspended and never started may have no such condition). One
//    finding per such cluster; it says what the cluster would ask for once
//    running (RequestsOf).
//  - RayJob: spec.suspend is not true while status.jobDeploymentStatus is
//    "Suspended" or "Suspending", for longer than the limit. KubeRay moves a
//    Suspended RayJob whose spec.suspend is false to "New" at its next
//    reconcile, and finishes a suspension (Suspending) by deleting the
//    cluster, whatever spec.suspend says, retrying every 3 s. A RayJob
//    records no time of its suspension or of its resumption (entering
//    Suspended clears status.rayJobInfo; status.startTime is when it last
//    left New), so the time is measured from the later of
//    metadata.creationTimestamp and status.startTime: both precede the
//    suspension, so the time shown is how long it may have been so, at most.
//    A RayJob resumed a moment before the audit is a finding only in the
//    instant before KubeRay's next reconcile.
// An object whose times are unknown (none of those timestamps parse) is not
// judged.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ray_webhook/audit/audit_report.h"
#include "ray_webhook/audit/cost_leaks.h"
#include "ray_webhook/core/model/ray_cluster_spec.h"

namespace ray_webhook {

inline constexpr std::string_view kSuspendedLoopRule = "suspended-loop";

// A RayCluster whose spec.suspend is true.
struct SuspendedClusterFacts {
  std::string source;
  std::optional<std::int64_t> created;          // metadata.creationTimestamp
  std::optional<std::int64_t> suspended_since;  // condition RayClusterSuspended, status True: lastTransitionTime
  bool deleting = false;                        // metadata.deletionTimestamp is set
  ClusterRequests requests;                     // RequestsOf its spec: what it asks for once running
};

// A RayJob whose status.jobDeploymentStatus is Suspended or Suspending.
struct SuspendedJobFacts {
  std::string namespace_name, name, source;
  std::string deployment_status;                    // status.jobDeploymentStatus
  bool spec_suspend = false;                        // spec.suspend
  std::string cluster_name;                         // status.rayClusterName (KubeRay clears it once Suspended)
  std::optional<std::int64_t> created, start_time;  // metadata.creationTimestamp, status.startTime
};

// A RayService that names a RayCluster in its status.
struct ServiceSuspendFacts {
  std::string namespace_name, name, source;
  bool spec_suspend = false;            // spec.suspend (v1.7.0)
  bool cluster_config_suspend = false;  // spec.rayClusterConfig.suspend
  std::string active_cluster;           // status.activeServiceStatus.rayClusterName
  std::string pending_cluster;          // status.pendingServiceStatus.rayClusterName
};

// What the rule keeps of a dump: only suspended RayClusters, suspended RayJobs and RayServices
// that name a cluster, so a cluster of thousands of objects costs little.
struct SuspendedLoopFacts {
  std::map<ClusterKey, SuspendedClusterFacts> clusters;
  std::vector<SuspendedJobFacts> jobs;
  std::vector<ServiceSuspendFacts> services;
};

// Keeps what the rule reads of one decoded ray.io object (any kind; the others are ignored).
void KeepSuspendedLoopFacts(const RayObject& object, const std::string& namespace_name, const std::string& name,
                            const std::string& source, SuspendedLoopFacts& facts);

std::vector<AuditFinding> SuspendedLoops(const SuspendedLoopFacts& facts, std::int64_t now,
                                         const CostLeakLimits& limits);

// The earliest time after `now` at which an object that is not yet a finding becomes one, if
// nothing changes; nullopt when none would.
std::optional<std::int64_t> NextSuspendedLoopDeadline(const SuspendedLoopFacts& facts, std::int64_t now,
                                                      const CostLeakLimits& limits);

}  // namespace ray_webhook
