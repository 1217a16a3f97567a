#include "ray_webhook/audit/cost_leaks.h"

#include <cstdio>

namespace ray_webhook {
namespace {

std::string ShowAmount(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, v == static_cast<std::int64_t>(v) ? "%.0f" : "%.2f", v);
  return buf;
}

}  // namespace

std::string Holds(const ClusterRequests& r) {
  std::string out = std::to_string(r.pods) + " Pod(s) requesting " + ShowAmount(r.cpus) + " CPU(s)";
  if (r.gpus > 0) out += " and " + ShowAmount(r.gpus) + " GPU(s)";
  return out;
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
    if (job.deployment_status != "Complete" && job.deployment_status != "Failed") continue;
    if (job.uses_cluster_selector || job.cluster_name.empty() || !job.end_time) continue;
    const auto it = clusters.find({job.namespace_name, job.cluster_name});
    if (it == clusters.end() || it->second.deleting) continue;
    const std::int64_t kuberay_wait = job.shutdown_after_job_finishes ? job.ttl_seconds_after_finished : 0;
    const std::int64_t since = now - *job.end_time;
    if (since <= kuberay_wait + limits.finished_job_grace.count()) continue;
    std::string why = job.shutdown_after_job_finishes
                          ? "KubeRay deletes it " + std::to_string(job.ttl_seconds_after_finished) +
                                " s after the job ends (shutdownAfterJobFinishes), so something stopped it: most often "
                                "deletionStrategy rules that match no outcome of the job (kuberay #5184)"
                          : "the RayJob keeps it (shutdownAfterJobFinishes is not set)";
    out.push_back({std::string(kFinishedJobClusterRule), "RayJob", job.namespace_name, job.name,
                   "status.rayClusterName",
                   "RayJob " + job.name + " ended " + job.deployment_status + " " + ShowAge(since) +
                       " ago, and its RayCluster " + job.cluster_name + " still runs: " + Holds(it->second.requests) +
                       ". " + why + ". Delete the RayCluster, or the RayJob with it, if nothing needs it.",
                   job.source});
  }
  return out;
}

std::vector<AuditFinding> StuckUpgrades(const std::vector<RayServiceFacts>& services,
                                        const std::map<ClusterKey, RayClusterFacts>& clusters, std::int64_t now,
                                        const CostLeakLimits& limits) {
  std::vector<AuditFinding> out;
  for (const RayServiceFacts& service : services) {
    if (service.pending_cluster.empty()) continue;
    const auto pending = clusters.find({service.namespace_name, service.pending_cluster});
    if (pending == clusters.end() || pending->second.deleting || !pending->second.created) continue;
    const std::int64_t age = now - *pending->second.created;
    if (age <= limits.pending_cluster_limit.count()) continue;
    std::string message = "RayService " + service.name + "'s new RayCluster " + service.pending_cluster +
                          " has been pending for " + ShowAge(age) + " (" + Holds(pending->second.requests) + ")";
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

}  // namespace ray_webhook
