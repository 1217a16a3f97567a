#include "cost_leak_flags.h"

#include <chrono>
#include <string>

#include "flag_values.h"

namespace ray_webhook {
namespace {

CostLeakLimits& Limits(ServeSettings& s) { return s.command.config.cost_leak_limits; }
const CostLeakLimits& Limits(const ServeSettings& s) { return s.command.config.cost_leak_limits; }

// "10m", "90s": minutes when whole, as the defaults are written.
std::string ShowLimit(std::chrono::seconds d) {
  return d.count() % 60 == 0 ? std::to_string(d.count() / 60) + "m" : std::to_string(d.count()) + "s";
}

// A limit of CostLeakLimits as a flag's setter and shown default.
template <std::chrono::seconds CostLeakLimits::*kLimit, const std::string_view& kName>
Status SetLimit(ServeSettings& s, std::string_view v) {
  // Up to a week: beyond it, a cost leak would be noticed on the bill first.
  return DurationFlag(kName, v, std::chrono::seconds(0), std::chrono::minutes(10080), "10m or 90s, from 0s to 10080m",
                      &(Limits(s).*kLimit));
}
template <std::chrono::seconds CostLeakLimits::*kLimit>
std::string ShownLimit(const ServeSettings& s) {
  return ShowLimit(Limits(s).*kLimit);
}

constexpr std::string_view kFinishedJobGrace = "--audit-finished-job-grace";
constexpr std::string_view kPendingClusterLimit = "--audit-pending-cluster-limit";
constexpr std::string_view kSuspendedLimit = "--audit-suspended-limit";

const ServeFlag kCostLeakFlags[] = {
    {kFinishedJobGrace, "D", kAuditFlagSection,
     "finished-job-cluster: how long after KubeRay's own wait (ttlSecondsAfterFinished) a finished RayJob's "
     "RayCluster may still exist; 10m covers the operator's requeue and the Pods' termination",
     "rule `finished-job-cluster` ([rules.md](rules.md#finished-job-cluster)): how long past a finished RayJob's "
     "`status.endTime`, plus `ttlSecondsAfterFinished` when `shutdownAfterJobFinishes` is set, its RayCluster may "
     "still exist before it is a finding (`10m`, `90s`, from `0s` to `10080m`). The default, 10 minutes, covers the "
     "operator's requeue and the Pods' termination grace period, so only a cluster that stays is named",
     &SetLimit<&CostLeakLimits::finished_job_grace, kFinishedJobGrace>,
     &ShownLimit<&CostLeakLimits::finished_job_grace>},
    {kPendingClusterLimit, "D", kAuditFlagSection,
     "stuck-upgrade: how old a RayService's pending RayCluster may be; 30m leaves room for pulling a large Ray "
     "image and starting the cluster, twice KubeRay's former serviceUnhealthySecondThreshold (900 s)",
     "rule `stuck-upgrade` ([rules.md](rules.md#stuck-upgrade)): how long after its creation a RayService's pending "
     "RayCluster (`status.pendingServiceStatus.rayClusterName`) may still be pending before it is a finding (`30m`, "
     "`90s`, from `0s` to `10080m`). The default, 30 minutes, leaves room for pulling a large Ray image and starting "
     "the cluster; it is twice KubeRay's former `serviceUnhealthySecondThreshold` (900 s)",
     &SetLimit<&CostLeakLimits::pending_cluster_limit, kPendingClusterLimit>,
     &ShownLimit<&CostLeakLimits::pending_cluster_limit>},
    {kSuspendedLimit, "D", kAuditFlagSection,
     "suspended-loop: how long a RayService's RayCluster may stay suspended, or a RayJob Suspended, once its spec "
     "asks for no suspension; 10m is hundreds of KubeRay's reconciles (every 2 s to 3 s), which act on it at once",
     "rule `suspended-loop` ([rules.md](rules.md#suspended-loop)): how long a RayCluster that a RayService names may "
     "keep `spec.suspend: true`, or a RayJob `status.jobDeploymentStatus` `Suspended` or `Suspending`, once the "
     "object's spec asks for no suspension, before it is a finding (`10m`, `90s`, from `0s` to `10080m`). The "
     "default, 10 minutes, is hundreds of KubeRay's reconciles: the operator requeues a RayJob every 3 s and a "
     "RayService or RayCluster every 2 s, and acts on a changed spec at once",
     &SetLimit<&CostLeakLimits::suspended_limit, kSuspendedLimit>, &ShownLimit<&CostLeakLimits::suspended_limit>},
};

}  // namespace

std::span<const ServeFlag> CostLeakFlags() { return kCostLeakFlags; }

}  // namespace ray_webhook
