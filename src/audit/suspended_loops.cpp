#include "ray_webhook/audit/suspended_loops.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "ray_webhook/audit/cost_facts.h"

namespace ray_webhook {
namespace {

// rayjob_types.go (KubeRay v1.6.2, v1.7.0): JobDeploymentStatusSuspending, JobDeploymentStatusSuspended.
bool SuspendedStatus(const std::string& status) { return status == "Suspended" || status == "Suspending"; }

// Since when a RayJob may have been suspended with spec.suspend not true: the later of its times.
std::optional<std::int64_t> JobSince(const SuspendedJobFacts& job) {
  if (job.created && job.start_time) return std::max(*job.created, *job.start_time);
  return job.created ? job.created : job.start_time;
}

std::optional<std::int64_t> ClusterSince(const SuspendedClusterFacts& c) {
  return c.suspended_since ? c.suspended_since : c.created;
}

// A suspended RayCluster a RayService names, and where its status names it.
struct ServiceCluster {
  const ServiceSuspendFacts* service;
  const std::string* name;
  const char* field;
  const SuspendedClusterFacts* cluster;
};

// Each object in the state the rule judges, whatever its times: job(j) for a RayJob,
// service_cluster(c) for each cluster of a RayService (the pending one first).
void ForEachCandidate(const SuspendedLoopFacts& facts, const std::function<void(const SuspendedJobFacts&)>& job,
                      const std::function<void(const ServiceCluster&)>& service_cluster) {
  for (const SuspendedJobFacts& j : facts.jobs) {
    if (!j.spec_suspend && SuspendedStatus(j.deployment_status)) job(j);
  }
  for (const ServiceSuspendFacts& s : facts.services) {
    if (s.spec_suspend || s.cluster_config_suspend) continue;
    const std::pair<const std::string*, const char*> named[] = {
        {&s.pending_cluster, "status.pendingServiceStatus.rayClusterName"},
        {&s.active_cluster, "status.activeServiceStatus.rayClusterName"}};
    for (const auto& [name, field] : named) {
      if (name->empty() || (name == &s.active_cluster && s.active_cluster == s.pending_cluster)) continue;
      const auto it = facts.clusters.find({s.namespace_name, *name});
      if (it == facts.clusters.end() || it->second.deleting) continue;
      service_cluster({&s, name, field, &it->second});
    }
  }
}

}  // namespace

void KeepSuspendedLoopFacts(const RayObject& o, const std::string& ns, const std::string& name,
                            const std::string& source, SuspendedLoopFacts& facts) {
  switch (o.kind) {
    case RayObjectKind::kRayCluster:
      if (!o.cluster || !o.cluster->suspend) break;
      facts.clusters[{ns, name}] = {source, ParseRfc3339(o.metadata.creation_timestamp),
                                    ParseRfc3339(o.cluster_state.suspended_since), o.metadata.deletion_requested,
                                    RequestsOf(*o.cluster)};
      break;
    case RayObjectKind::kRayJob: {
      const std::string status(o.job.deployment_status);
      if (!SuspendedStatus(status)) break;
      facts.jobs.push_back({ns, name, source, status, o.job.suspend, std::string(o.job.cluster_name),
                            ParseRfc3339(o.metadata.creation_timestamp), ParseRfc3339(o.job.start_time)});
      break;
    }
    case RayObjectKind::kRayService:
      if (o.service.active_cluster.empty() && o.service.pending_cluster.empty()) break;
      facts.services.push_back({ns, name, source, o.service.suspend, o.cluster && o.cluster->suspend,
                                std::string(o.service.active_cluster), std::string(o.service.pending_cluster)});
      break;
    case RayObjectKind::kRayCronJob: break;
  }
}

std::vector<AuditFinding> SuspendedLoops(const SuspendedLoopFacts& facts, std::int64_t now,
                                         const CostLeakLimits& limits) {
  std::vector<AuditFinding> out;
  const std::int64_t limit = limits.suspended_limit.count();
  ForEachCandidate(
      facts,
      [&](const SuspendedJobFacts& job) {
        const std::optional<std::int64_t> since = JobSince(job);
        if (!since || now - *since <= limit) return;
        const std::string cluster = job.cluster_name.empty() ? "it has no RayCluster"
                                                             : "its RayCluster " + job.cluster_name + " is not deleted";
        const std::string what =
            job.deployment_status == "Suspended"
                ? "KubeRay moves a Suspended RayJob whose spec.suspend is false to New at its next reconcile, so "
                  "its reconcile loop is not acting on it (kuberay #4416)"
                : "KubeRay finishes a suspension by deleting the RayJob's RayCluster and submitter Job, retrying "
                  "every 3 s, and that deletion is not completing";
        out.push_back(
            {std::string(kSuspendedLoopRule), "RayJob", job.namespace_name, job.name, "status.jobDeploymentStatus",
             "RayJob " + job.name + " is " + job.deployment_status + " though its spec.suspend is not true, for up " +
                 "to " + ShowAge(now - *since) + " (the RayJob records no time of its suspension: since its " +
                 (job.start_time && (!job.created || *job.start_time >= *job.created) ? "status.startTime"
                                                                                      : "creation") +
                 "); " + cluster + ". " + what +
                 ". The job does not run. Restart the KubeRay operator; if it stays, set spec.suspend to true and "
                 "back to false, or recreate the RayJob.",
             job.source});
      },
      [&](const ServiceCluster& c) {
        const std::optional<std::int64_t> since = ClusterSince(*c.cluster);
        if (!since || now - *since <= limit) return;
        const bool pending = c.name == &c.service->pending_cluster;
        out.push_back(
            {std::string(kSuspendedLoopRule), "RayService", c.service->namespace_name, c.service->name, c.field,
             "RayService " + c.service->name + "'s " + (pending ? "pending" : "active") + " RayCluster " + *c.name +
                 " has been suspended (spec.suspend true) for " + ShowAge(now - *since) +
                 (c.cluster->suspended_since ? "" : " (since its creation)") +
                 ", though the RayService's spec asks for no suspension: the cluster has no head, so nothing is "
                 "served, while KubeRay keeps reconciling the RayService. Running, it would ask for " +
                 Holds(c.cluster->requests) +
                 ". KubeRay before 1.6.1 never carries a RayService's unsuspension to a RayCluster it already made "
                 "(kuberay #4686); from 1.7.0 a queue (Kueue) decides the RayCluster's suspend once it exists, and "
                 "may still be holding it. Unless a queue holds it, set the RayCluster's spec.suspend to false, or "
                 "delete it for KubeRay to make it anew.",
             c.service->source});
      });
  return out;
}

std::optional<std::int64_t> NextSuspendedLoopDeadline(const SuspendedLoopFacts& facts, std::int64_t now,
                                                      const CostLeakLimits& limits) {
  std::optional<std::int64_t> next;
  const std::int64_t limit = limits.suspended_limit.count();
  // A finding from since + limit + 1 on (SuspendedLoops: more than the limit).
  auto consider = [&](std::optional<std::int64_t> since) {
    if (!since) return;
    const std::int64_t at = *since + limit + 1;
    if (at > now && (!next || at < *next)) next = at;
  };
  ForEachCandidate(
      facts, [&](const SuspendedJobFacts& job) { consider(JobSince(job)); },
      [&](const ServiceCluster& c) { consider(ClusterSince(*c.cluster)); });
  return next;
}

}  // namespace ray_webhook
