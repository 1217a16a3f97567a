#include "ray_webhook/audit/auditor.h"

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "ray_webhook/audit/cost_facts.h"
#include "ray_webhook/audit/suspended_loops.h"
#include "ray_webhook/core/decode/document_index.h"
#include "ray_webhook/core/decode/object_decoder.h"
#include "ray_webhook/core/model/admission_text.h"
#include "ray_webhook/core/model/head_pods.h"
#include "ray_webhook/core/pod/ray_pod.h"
#include "ray_webhook/core/review/object_findings.h"
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

using Outline = DocumentIndex::Outline;

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

struct Auditor::Impl {
  Impl(PolicyConfig p, CostLeakLimits l) : policy(std::move(p)), limits(l) {}

  struct HeadCensus {
    std::vector<HeadPod> live;  // the first kNamedHeads
    std::size_t live_count = 0;
    std::string source;
  };
  struct Variant {
    std::size_t hash = 0;
    std::string signature;  // of the first Pod of the variant: ObjectDecoder::WorkerSpecSignature
    std::size_t count = 0;
    std::vector<std::string> names;  // the first kNamedPods
    std::string source;
  };
  struct WorkerGroup {
    std::vector<Variant> variants;  // the first kTrackedVariants
    std::size_t untracked_pods = 0;
  };

  void Add(AuditFinding finding) {
    ++report.findings_by_rule[finding.rule];
    if (report.findings.size() < kMaxAuditFindings) {
      report.findings.push_back(std::move(finding));
    } else {
      ++report.dropped_findings;
    }
  }

  // One object of a document: `object` its outline (DocumentIndex), kind and api_version its own or
  // the List's.
  Status AddObject(const Outline& object, const std::string& kind, const std::string& api_version,
                   const std::string& source) {
    std::string ns(object.namespace_name);
    if (ns.empty()) ns = "default";
    std::string name(object.name.empty() ? object.generate_name : object.name);
    GroupVersionKind gvk;
    std::optional<RayObjectKind> ray_kind;
    const std::size_t slash = api_version.find('/');
    if (kind == "Pod" && api_version == "v1") {
      gvk = {"", "v1", "Pod"};
      ++report.pods;
    } else if (slash != std::string::npos && api_version.compare(0, slash, "ray.io") == 0) {
      gvk = {"ray.io", std::string_view(api_version).substr(slash + 1), kind};
      ray_kind = RayObjectKindOf(gvk);
      if (!ray_kind) {
        ++report.skipped_objects;
        return Status::Ok();
      }
      switch (*ray_kind) {
        case RayObjectKind::kRayCluster: ++report.ray_clusters; break;
        case RayObjectKind::kRayJob: ++report.ray_jobs; break;
        case RayObjectKind::kRayService: ++report.ray_services; break;
        case RayObjectKind::kRayCronJob: ++report.ray_cron_jobs; break;
      }
    } else {
      ++report.skipped_objects;
      return Status::Ok();
    }
    // The object as the request of its CREATE, so that the rules read it as at admission.
    AdmissionRequest request;
    request.uid = "audit";
    request.kind = gvk;
    request.operation = "CREATE";
    request.namespace_name = ns;
    request.name = name;
    const Status decoded = ray_kind ? decoder.DecodeRayObject(object.text, *ray_kind, request.ray_object.emplace(),
                                                              object.readable_padding)
                                    : decoder.DecodePod(object.text, request.pod.emplace(), object.readable_padding);
    if (!decoded.ok()) return Status::Error(source + ": " + kind + " " + ns + "/" + name + ": " + decoded.message());
    if (request.ray_object) KeepCostFacts(*request.ray_object, ns, name, source);
    const HeadPod state{name, request.pod ? std::string(request.pod->phase) : std::string(),
                        request.pod && request.pod->metadata.deletion_requested};
    const bool live = IsLiveHead(state);
    // A Pod on its way out (terminating) or done (Succeeded, Failed) is history: counted, not judged.
    if (request.pod && !live) return Status::Ok();
    for (RuleFinding& f : ObjectFindings(request, policy)) {
      Add({std::move(f.rule), kind, ns, name, std::move(f.field_path), std::move(f.message), source});
    }
    if (!request.pod) return Status::Ok();
    const auto identity = IdentifyRayPod(*request.pod);
    if (!identity) return Status::Ok();
    if (identity->node_type == RayNodeType::kHead) {
      HeadCensus& census = heads[{ns, std::string(identity->cluster)}];
      if (census.live_count++ == 0) census.source = source;
      if (census.live.size() < kNamedHeads) census.live.push_back(state);
      return Status::Ok();
    }
    WorkerGroup& group = groups[{ns, std::string(identity->cluster), std::string(identity->group)}];
    if (Status s = decoder.WorkerSpecSignature(signature); !s.ok()) {
      return Status::Error(source + ": " + kind + " " + ns + "/" + name + ": " + s.message());
    }
    CountWorker(group, signature, name, source);
    return Status::Ok();
  }

  // The few facts of a ray.io object the cost-leak rules read at Finish, not the object.
  void KeepCostFacts(const RayObject& o, const std::string& ns, const std::string& name, const std::string& source) {
    KeepSuspendedLoopFacts(o, ns, name, source, suspended_loops);
    switch (o.kind) {
      case RayObjectKind::kRayCluster: {
        RayClusterFacts& c = clusters[{ns, name}];
        c.source = source;
        c.created = ParseRfc3339(o.metadata.creation_timestamp);
        c.deleting = o.metadata.deletion_requested;
        c.requests = o.cluster ? RequestsOf(*o.cluster) : ClusterRequests{};
        break;
      }
      case RayObjectKind::kRayJob:
        if (o.job.deployment_status != "Complete" && o.job.deployment_status != "Failed") break;
        jobs.push_back({ns, name, source, std::string(o.job.deployment_status), ParseRfc3339(o.job.end_time),
                        std::string(o.job.cluster_name), o.uses_cluster_selector, o.job.shutdown_after_job_finishes,
                        o.job.ttl_seconds_after_finished});
        break;
      case RayObjectKind::kRayService:
        if (!o.service.pending_cluster.empty())
          services.push_back(
              {ns, name, source, std::string(o.service.active_cluster), std::string(o.service.pending_cluster)});
        break;
      case RayObjectKind::kRayCronJob: break;
    }
  }

  static void CountWorker(WorkerGroup& group, const std::string& signature, const std::string& name,
                          const std::string& source) {
    const std::size_t hash = std::hash<std::string>{}(signature);
    for (Variant& v : group.variants) {
      if (v.hash != hash || v.signature != signature) continue;
      if (v.names.size() < kNamedPods) v.names.push_back(name);
      ++v.count;
      return;
    }
    if (group.variants.size() == kTrackedVariants) {
      ++group.untracked_pods;
      return;
    }
    group.variants.push_back({hash, signature, 1, {name}, source});
  }

  void ExtraHeads() {
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
      Add({std::string(kExtraHeadRule), "RayCluster", ns, cluster, "",
           "RayCluster " + Quote(cluster, 63) + " has " + std::to_string(census.live_count) +
               " live head Pods: " + listed +
               ". Workers behind the head service join different heads, and KubeRay 1.4 and later stop reconciling "
               "the cluster's workers (\"Please delete extra head pods\" in the operator's log, no Event). Delete "
               "the extra heads, keeping the one the workers joined.",
           census.source});
    }
  }

  void WorkerDrift() {
    for (const auto& [key, group] : groups) {
      if (group.variants.size() < 2) continue;
      const auto& [ns, cluster, group_name] = key;
      std::size_t common = 0;
      for (std::size_t k = 1; k < group.variants.size(); ++k) {
        if (group.variants[k].count > group.variants[common].count) common = k;
      }
      const Variant& reference = group.variants[common];
      const Json reference_spec = ParsedSignature(reference.signature);
      for (std::size_t k = 0; k < group.variants.size(); ++k) {
        if (k == common) continue;
        const Variant& odd = group.variants[k];
        const std::vector<std::string> fields =
            SpecDifferences(reference_spec, ParsedSignature(odd.signature), kShownDifferences);
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
        Add({std::string(kWorkerDriftRule), "Pod", ns, odd.names.front(), fields.empty() ? "" : fields.front(),
             std::move(message), odd.source});
      }
    }
  }

  PolicyConfig policy;
  CostLeakLimits limits;
  DocumentIndex index;
  ObjectDecoder decoder;
  std::string signature;  // reused from Pod to Pod
  AuditReport report;
  std::map<std::pair<std::string, std::string>, HeadCensus> heads;                  // (namespace, cluster)
  std::map<std::tuple<std::string, std::string, std::string>, WorkerGroup> groups;  // (namespace, cluster, group)
  std::map<ClusterKey, RayClusterFacts> clusters;
  std::vector<RayJobFacts> jobs;          // only those that ended hold a cluster the rule may name
  std::vector<RayServiceFacts> services;  // only those with a pending cluster
  SuspendedLoopFacts suspended_loops;
};

Auditor::Auditor(PolicyConfig policy, CostLeakLimits limits)
    : impl_(std::make_unique<Impl>(std::move(policy), limits)) {}
Auditor::~Auditor() = default;

Status Auditor::AddDocument(std::string_view json_text, std::string_view source_view, std::size_t readable_padding) {
  const std::string source(source_view);
  try {
    DocumentIndex& index = impl_->index;
    switch (index.Read(json_text, kMaxDocumentDepth, readable_padding)) {
      case DocumentIndex::Shape::kObject: break;
      case DocumentIndex::Shape::kNull: return Status::Ok();  // an empty YAML document
      case DocumentIndex::Shape::kNotObject:
        return Status::Error(source + ": not an object (a JSON object or YAML mapping)");
      case DocumentIndex::Shape::kTooDeep:
        return Status::Error(source + ": nested deeper than " + std::to_string(kMaxDocumentDepth) +
                             " levels, which no Kubernetes object is");
      case DocumentIndex::Shape::kInvalidJson: return Status::Error(source + ": not JSON: " + index.error());
    }
    const Outline& root = index.root();
    const std::string kind(root.kind);
    const std::string api_version(root.api_version);
    if (kind.empty()) return Status::Error(source + ": no kind; not a Kubernetes object");
    const DocumentIndex::Items items = index.items_shape();
    const bool list =
        kind == "List" || (kind.size() > 4 && kind.ends_with("List") && items != DocumentIndex::Items::kAbsent);
    if (!list) {
      if (api_version.empty()) return Status::Error(source + ": " + kind + " without apiVersion");
      return impl_->AddObject(root, kind, api_version, source);
    }
    if (items == DocumentIndex::Items::kAbsent || items == DocumentIndex::Items::kNull) return Status::Ok();
    if (items != DocumentIndex::Items::kList) return Status::Error(source + ": " + kind + " whose items is not a list");
    // A typed list's items carry no kind of their own when the API sends them.
    const std::string item_kind = kind == "List" ? "" : kind.substr(0, kind.size() - 4);
    std::size_t n = 0;
    for (const Outline& item : index.items()) {
      const std::string where = source + " item " + std::to_string(++n);
      if (!item.object) return Status::Error(where + ": not an object");
      std::string k(item.kind), v(item.api_version);
      if (k.empty()) k = item_kind;
      if (v.empty()) v = api_version;
      if (k.empty() || v.empty()) return Status::Error(where + ": no kind or apiVersion; not a Kubernetes object");
      if (Status added = impl_->AddObject(item, k, v, where); !added.ok()) return added;
    }
    return Status::Ok();
  } catch (const std::bad_alloc&) {
    return Status::Error(source + ": out of memory");
  }
}

AuditReport Auditor::Finish(std::optional<std::int64_t> now) {
  impl_->ExtraHeads();
  impl_->WorkerDrift();
  if (now) {
    for (AuditFinding& f : FinishedJobClusters(impl_->jobs, impl_->clusters, *now, impl_->limits))
      impl_->Add(std::move(f));
    for (AuditFinding& f : StuckUpgrades(impl_->services, impl_->clusters, *now, impl_->limits))
      impl_->Add(std::move(f));
    for (AuditFinding& f : SuspendedLoops(impl_->suspended_loops, *now, impl_->limits)) impl_->Add(std::move(f));
  }
  return std::move(impl_->report);
}

}  // namespace ray_webhook
