#include "ray_webhook/audit/cost_leaks.h"

#include <cstdio>

#include "ray_webhook/audit/suspended_loops.h"

namespace ray_webhook {
namespace {

std::string ShowAmount(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v == static_cast<std::int64_t>(v) ? "%.0f" : "%.2f", v);
  return buf;
}

// When a job's cluster is first overdue: the rule finds it once more than this has passed since the job ended.
std::int64_t AllowedAfterEnd(const RayJobFacts& job, const CostLeakLimits& limits) {
  const std::int64_t kuberay_wait = job.shutdown_after_job_finishes ? job.ttl_seconds_after_finished : 0;
  return kuberay_wait + limits.finished_job_grace.count();
}

// The cluster a job still holds, or nullptr.
const RayClusterFacts* HeldCluster(const RayJobFacts& job, const std::map<ClusterKey, RayClusterFacts>& clusters) {
  if (job.deployment_status != "Complete" && job.deployment_status != "Failed") return nullptr;
  if (job.uses_cluster_selector || job.cluster_name.empty() || !job.end_time) return nullptr;
  const auto it = clusters.find({job.namespace_name, job.cluster_name});
  return it == clusters.end() || it->second.deleting ? nullptr : &it->second;
}

// A service's pending cluster, when its age can be told, or nullptr.
const RayClusterFacts* PendingCluster(const RayServiceFacts& service,
                                      const std::map<ClusterKey, RayClusterFacts>& clusters) {
  if (service.pending_cluster.empty()) return nullptr;
  const auto it = clusters.find({service.namespace_name, service.pending_cluster});
  return it == clusters.end() || it->second.deleting || it->second.suspended || !it->second.created ? nullptr
                                                                                                    : &it->second;
}

}  // namespace

std::string Holds(const ClusterRequests& r) {
  std::string out = std::to_string(r.pods) + " Pod(s) requesting " + ShowAmount(r.cpus) + " CPU(s)";
  if (r.gpus > 0) out += " and " + ShowAmount(r.gpus) + " GPU(s)";
  return out;
}

bool RuleJudgedOverTime(std::string_view rule) {
  return rule == kFinishedJobClusterRule || rule == kStuckUpgradeRule || rule == kSuspendedLoopRule;
}

std::string ShowAge(std::int64_t s) {
  if (s < 0) s = 0;
  const std::int64_t d = s / 86400, h = s % 86400 / 3600, m = s % 3600 / 60;
  if (d > 0) return std::to_string(d) + "d " + std::to_string(h) + "h";
  if (h > 0) return std::to_string(h) + "h " + std::to_string(m) + "m";
  if (m > 0) return std::to_string(m) + "m";
  return std::to_string(s) + "s";
}

std::vector<AuditFinding> FinishedJobClusters(const std::vector<RayJobFacts>& jobs,
                                              const std::map<ClusterKey, RayClusterFacts>& clusters, std::int64_t now,
                                              const CostLeakLimits& limits) {
  std::vector<AuditFinding> out;
  for (const RayJobFacts& job : jobs) {
    const RayClusterFacts* held = HeldCluster(job, clusters);
    if (held == nullptr) continue;
    const std::int64_t since = now - *job.end_time;
    if (since <= AllowedAfterEnd(job, limits)) continue;
    std::string why = job.shutdown_after_job_finishes
                          ? "KubeRay deletes it " + std::to_string(job.ttl_seconds_after_finished) +
                                " s after the job ends (shutdownAfterJobFinishes), so something stopped it: most often "
                                "deletionStrategy rules that match no outcome of the job (kuberay #5184)"
                          : "the RayJob keeps it (shutdownAfterJobFinishes is not set)";
    out.push_back({std::string(kFinishedJobClusterRule), "RayJob", job.namespace_name, job.name,
                   "status.rayClusterName",
                   "RayJob " + job.name + " ended " + job.deployment_status + " " + ShowAge(since) +
                       " ago, and its RayCluster " + job.cluster_name + " still runs: " + Holds(held->requests) + ". " +
                       why + ". Delete the RayCluster, or the RayJob with it, if nothing needs it.",
                   job.source});
  }
  return out;
}

std::vector<AuditFinding> StuckUpgrades(const std::vector<RayServiceFacts>& services,
                                        const std::map<ClusterKey, RayClusterFacts>& clusters, std::int64_t now,
                                        const CostLeakLimits& limits) {
  std::vector<AuditFinding> out;
  for (const RayServiceFacts& service : services) {
    const RayClusterFacts* pending = PendingCluster(service, clusters);
    if (pending == nullptr) continue;
    const std::int64_t age = now - *pending->created;
    if (age <= limits.pending_cluster_limit.count()) continue;
    std::string message = "RayService " + service.name + "'s new RayCluster " + service.pending_cluster +
                          " has been pending for " + ShowAge(age) + " (" + Holds(pending->requests) + ")";
    const auto active = clusters.find({service.namespace_name, service.active_cluster});
    if (!service.active_cluster.empty() && active != clusters.end()) {
      message +=
          ", beside its active RayCluster " + service.active_cluster + " (" + Holds(active->second.requests) + ")";
    }
    message +=
        ". KubeRay keeps both until the new one is ready, and a new cluster that never becomes ready keeps them "
        "both forever (kuberay #5088). Find why it is not ready (its head Pod's events and logs), or put the "
        "RayService's spec back.";
    out.push_back({std::string(kStuckUpgradeRule), "RayService", service.namespace_name, service.name,
                   "status.pendingServiceStatus.rayClusterName", std::move(message), service.source});
  }
  return out;
}

std::optional<std::int64_t> NextCostLeakDeadline(const std::vector<RayJobFacts>& jobs,
                                                 const std::vector<RayServiceFacts>& services,
                                                 const std::map<ClusterKey, RayClusterFacts>& clusters,
                                                 std::int64_t now, const CostLeakLimits& limits) {
  std::optional<std::int64_t> next;
  const auto consider = [&](std::int64_t first_found) {
    if (first_found > now && (!next || first_found < *next)) next = first_found;
  };
  for (const RayJobFacts& job : jobs) {
    if (HeldCluster(job, clusters) != nullptr) consider(*job.end_time + AllowedAfterEnd(job, limits) + 1);
  }
  for (const RayServiceFacts& service : services) {
    if (const RayClusterFacts* pending = PendingCluster(service, clusters))
      consider(*pending->created + limits.pending_cluster_limit.count() + 1);
  }
  return next;
}

}  // namespace ray_webhook
