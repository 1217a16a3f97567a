#include "ray_webhook/audit/cross_object_rules.h"

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ray_webhook/core/model/admission_text.h"
#include "spec_differences.h"

namespace ray_webhook {
namespace {

using Json = nlohmann::json;

// Kept per RayCluster and per worker group: enough to name what is wrong,
// bounded whatever the cluster holds.
constexpr std::size_t kNamedHeads = 16;
constexpr std::size_t kNamedPods = 5;
constexpr std::size_t kTrackedVariants = 8;
constexpr std::size_t kShownDifferences = 4;

// A signature parsed to name differences. It is JSON the core wrote from a validated parse, bounded in
// depth, so it parses; were it not to, the finding would name no field rather than fail.
Json ParsedSignature(const std::string& signature) {
  Json spec = Json::parse(signature, nullptr, false);
  return spec.is_discarded() ? Json::object() : spec;
}

std::string NameList(const std::vector<std::string>& names, std::size_t total) {
  std::string out;
  for (const std::string& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  if (total > names.size()) out += ", and " + std::to_string(total - names.size()) + " more";
  return out;
}

}  // namespace

struct CrossObjectRules::Impl {
  explicit Impl(CostLeakLimits l) : limits(l) {}

  struct HeadCensus {
    std::vector<HeadPod> live;  // the first kNamedHeads
    std::size_t live_count = 0;
    std::string source;
  };
  struct Variant {
    std::size_t hash = 0;
    std::shared_ptr<const std::string> signature;  // of the first Pod of the variant, shared with the caller's
    std::size_t count = 0;
    std::vector<std::string> names;  // the first kNamedPods
    std::string source;
  };
  struct WorkerGroup {
    std::vector<Variant> variants;  // the first kTrackedVariants
    std::size_t untracked_pods = 0;
  };

  void CountWorker(WorkerGroup& group, const WorkerFact& worker, std::string_view signature,
                   const std::shared_ptr<const std::string>& kept, std::string_view source) {
    for (Variant& v : group.variants) {
      if (v.hash != worker.signature_hash || *v.signature != signature) continue;
      if (v.names.size() < kNamedPods) v.names.push_back(worker.name);
      ++v.count;
      return;
    }
    if (group.variants.size() == kTrackedVariants) {
      ++group.untracked_pods;
      return;
    }
    group.variants.push_back({worker.signature_hash,
                              kept ? kept : std::make_shared<const std::string>(signature),
                              1,
                              {worker.name},
                              std::string(source)});
  }

  void ExtraHeads(AuditReport& report) const {
    for (const auto& [key, census] : heads) {
      if (census.live_count < 2) continue;
      ++report.clusters_with_extra_heads;
      std::string listed;
      for (const HeadPod& h : census.live) {
        if (!listed.empty()) listed += ", ";
        listed += Quote(h.name, 63) + " (" + (h.phase.empty() ? std::string("phase unknown") : h.phase) + ")";
      }
      if (census.live_count > census.live.size())
        listed += ", and " + std::to_string(census.live_count - census.live.size()) + " more";
      const auto& [ns, cluster] = key;
      // KubeRay 1.4+ (ray-operator/controllers/ray/raycluster_controller.go, reconcilePods) logs
      // "Please delete extra head pods" and returns an error before it reconciles workers.
      AddFinding(report, {std::string(kExtraHeadRule), "RayCluster", ns, cluster, "",
                          "RayCluster " + Quote(cluster, 63) + " has " + std::to_string(census.live_count) +
                              " live head Pods: " + listed +
                              ". Workers behind the head service join different heads, and KubeRay 1.4 and later stop "
                              "reconciling the cluster's workers (\"Please delete extra head pods\" in the operator's "
                              "log, no Event). Delete the extra heads, keeping the one the workers joined.",
                          census.source});
    }
  }

  void WorkerDrift(AuditReport& report) const {
    for (const auto& [key, group] : groups) {
      if (group.variants.size() < 2) continue;
      const auto& [ns, cluster, group_name] = key;
      std::size_t common = 0;
      for (std::size_t k = 1; k < group.variants.size(); ++k) {
        if (group.variants[k].count > group.variants[common].count) common = k;
      }
      const Variant& reference = group.variants[common];
      const Json reference_spec = ParsedSignature(*reference.signature);
      for (std::size_t k = 0; k < group.variants.size(); ++k) {
        if (k == common) continue;
        const Variant& odd = group.variants[k];
        const std::vector<std::string> fields =
            SpecDifferences(reference_spec, ParsedSignature(*odd.signature), kShownDifferences);
        std::string where;
        for (const std::string& f : fields) where += (where.empty() ? "" : ", ") + f;
        std::string message = std::to_string(odd.count) + " worker Pod(s) of group " + Quote(group_name, 63) +
                              " of RayCluster " + Quote(cluster, 63) + " (" + NameList(odd.names, odd.count) +
                              ") differ from " + std::to_string(reference.count) + " sibling(s) (" +
                              NameList(reference.names, reference.count) + ") at " + where +
                              ". KubeRay builds every Pod of a group from the group's template, so these were built "
                              "from another: a template changed in place between Pod creations (KubeRay 0.4 and "
                              "older copy it shallowly, and the second worker gets a second /dev/shm mount: KubeRay "
                              "#688, fixed by PR #714), a template edited after the first Pods were made (running "
                              "Pods are not recreated), or a Pod changed by another webhook or by hand. Delete the "
                              "odd Pods so that the operator recreates them from the current template.";
        if (group.untracked_pods > 0) {
          message += " " + std::to_string(group.untracked_pods) + " more Pod(s) of the group have yet other specs.";
        }
        AddFinding(report, {std::string(kWorkerDriftRule), "Pod", ns, odd.names.front(),
                            fields.empty() ? "" : fields.front(), std::move(message), odd.source});
      }
    }
  }

  CostLeakLimits limits;
  std::map<std::pair<std::string, std::string>, HeadCensus> heads;                  // (namespace, cluster)
  std::map<std::tuple<std::string, std::string, std::string>, WorkerGroup> groups;  // (namespace, cluster, group)
  std::map<ClusterKey, RayClusterFacts> clusters;
  std::vector<RayJobFacts> jobs;
  std::vector<RayServiceFacts> services;
  SuspendedLoopFacts suspended;
};

CrossObjectRules::CrossObjectRules(CostLeakLimits limits) : impl_(std::make_unique<Impl>(limits)) {}
CrossObjectRules::~CrossObjectRules() = default;

void CrossObjectRules::Add(const ObjectFacts& facts, std::string_view signature, std::string_view source) {
  AddObject(facts, signature, nullptr, source);
}

void CrossObjectRules::Add(const ObjectFacts& facts, const std::shared_ptr<const std::string>& signature,
                           std::string_view source) {
  AddObject(facts, signature ? std::string_view(*signature) : std::string_view(), signature, source);
}

void CrossObjectRules::AddObject(const ObjectFacts& facts, std::string_view signature,
                                 const std::shared_ptr<const std::string>& kept, std::string_view source) {
  Impl& s = *impl_;
  if (const auto* head = std::get_if<HeadFact>(&facts.across)) {
    Impl::HeadCensus& census = s.heads[{facts.namespace_name, head->cluster}];
    if (census.live_count++ == 0) census.source = std::string(source);
    if (census.live.size() < kNamedHeads) census.live.push_back(head->pod);
  } else if (const auto* worker = std::get_if<WorkerFact>(&facts.across)) {
    s.CountWorker(s.groups[{facts.namespace_name, worker->cluster, worker->group}], *worker, signature, kept, source);
  } else if (const auto* cluster = std::get_if<RayClusterFacts>(&facts.across)) {
    s.clusters[{facts.namespace_name, facts.name}] = *cluster;
  } else if (const auto* job = std::get_if<RayJobFacts>(&facts.across)) {
    // Only a job that ended holds a cluster the rule may name.
    if (job->deployment_status == "Complete" || job->deployment_status == "Failed") s.jobs.push_back(*job);
  } else if (const auto* service = std::get_if<RayServiceFacts>(&facts.across)) {
    if (!service->pending_cluster.empty()) s.services.push_back(*service);
  }
  if (facts.suspended) {
    for (const auto& [key, cluster] : facts.suspended->clusters) s.suspended.clusters[key] = cluster;
    s.suspended.jobs.insert(s.suspended.jobs.end(), facts.suspended->jobs.begin(), facts.suspended->jobs.end());
    s.suspended.services.insert(s.suspended.services.end(), facts.suspended->services.begin(),
                                facts.suspended->services.end());
  }
}

void CrossObjectRules::Finish(std::optional<std::int64_t> now, AuditReport& report) {
  impl_->ExtraHeads(report);
  impl_->WorkerDrift(report);
  if (!now) return;
  for (AuditFinding& f : FinishedJobClusters(impl_->jobs, impl_->clusters, *now, impl_->limits))
    AddFinding(report, std::move(f));
  for (AuditFinding& f : StuckUpgrades(impl_->services, impl_->clusters, *now, impl_->limits))
    AddFinding(report, std::move(f));
  for (AuditFinding& f : SuspendedLoops(impl_->suspended, *now, impl_->limits)) AddFinding(report, std::move(f));
}

std::optional<std::int64_t> CrossObjectRules::NextDeadline(std::int64_t now) const {
  const std::optional<std::int64_t> leak =
      NextCostLeakDeadline(impl_->jobs, impl_->services, impl_->clusters, now, impl_->limits);
  const std::optional<std::int64_t> loop = NextSuspendedLoopDeadline(impl_->suspended, now, impl_->limits);
  if (!leak) return loop;
  if (!loop) return leak;
  return std::min(*leak, *loop);
}

}  // namespace ray_webhook
