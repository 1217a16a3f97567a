#include "ray_webhook/audit/object_facts.h"

#include <functional>
#include <optional>

#include "ray_webhook/audit/cost_facts.h"
#include "ray_webhook/core/model/admission_text.h"
#include "ray_webhook/core/pod/ray_pod.h"
#include "ray_webhook/core/review/object_findings.h"

namespace ray_webhook {
namespace {

// The facts of a ray.io object that the cost-leak rules read.
void KeepCostFacts(const RayObject& o, const std::string& source, ObjectFacts& facts) {
  switch (o.kind) {
    case RayObjectKind::kRayCluster:
      facts.across =
          RayClusterFacts{source, ParseRfc3339(o.metadata.creation_timestamp), o.metadata.deletion_requested,
                          o.cluster ? RequestsOf(*o.cluster) : ClusterRequests{}, o.cluster && o.cluster->suspend};
      break;
    case RayObjectKind::kRayJob:
      facts.across = RayJobFacts{facts.namespace_name,
                                 facts.name,
                                 source,
                                 std::string(o.job.deployment_status),
                                 ParseRfc3339(o.job.end_time),
                                 std::string(o.job.cluster_name),
                                 o.uses_cluster_selector,
                                 o.job.shutdown_after_job_finishes,
                                 o.job.ttl_seconds_after_finished};
      break;
    case RayObjectKind::kRayService:
      facts.across = RayServiceFacts{facts.namespace_name, facts.name, source, std::string(o.service.active_cluster),
                                     std::string(o.service.pending_cluster)};
      break;
    case RayObjectKind::kRayCronJob: break;
  }
}

}  // namespace

void CountObject(AuditReport& report, AuditedKind kind) {
  switch (kind) {
    case AuditedKind::kPod: ++report.pods; break;
    case AuditedKind::kRayCluster: ++report.ray_clusters; break;
    case AuditedKind::kRayJob: ++report.ray_jobs; break;
    case AuditedKind::kRayService: ++report.ray_services; break;
    case AuditedKind::kRayCronJob: ++report.ray_cron_jobs; break;
    case AuditedKind::kSkipped: ++report.skipped_objects; break;
  }
}

Status ObjectFactsReader::Read(const DocumentIndex::Outline& object, const std::string& kind,
                               const std::string& api_version, const std::string& source, ObjectFacts& facts) {
  facts = ObjectFacts{};
  facts.namespace_name = object.namespace_name.empty() ? "default" : std::string(object.namespace_name);
  facts.name = object.name.empty() ? std::string(object.generate_name) : std::string(object.name);
  GroupVersionKind gvk;
  std::optional<RayObjectKind> ray_kind;
  const std::size_t slash = api_version.find('/');
  if (kind == "Pod" && api_version == "v1") {
    gvk = {"", "v1", "Pod"};
    facts.kind = AuditedKind::kPod;
  } else if (slash != std::string::npos && api_version.compare(0, slash, "ray.io") == 0) {
    gvk = {"ray.io", std::string_view(api_version).substr(slash + 1), kind};
    ray_kind = RayObjectKindOf(gvk);
    if (!ray_kind) return Status::Ok();
    switch (*ray_kind) {
      case RayObjectKind::kRayCluster: facts.kind = AuditedKind::kRayCluster; break;
      case RayObjectKind::kRayJob: facts.kind = AuditedKind::kRayJob; break;
      case RayObjectKind::kRayService: facts.kind = AuditedKind::kRayService; break;
      case RayObjectKind::kRayCronJob: facts.kind = AuditedKind::kRayCronJob; break;
    }
  } else {
    return Status::Ok();
  }
  // The object as the request of its CREATE, so that the rules read it as at admission.
  AdmissionRequest request;
  request.uid = "audit";
  request.kind = gvk;
  request.operation = "CREATE";
  request.namespace_name = facts.namespace_name;
  request.name = facts.name;
  const auto failed = [&](const Status& s) {
    return Status::Error(source + ": " + kind + " " + facts.namespace_name + "/" + facts.name + ": " + s.message());
  };
  const Status decoded =
      ray_kind ? decoder_.DecodeRayObject(object.text, *ray_kind, request.ray_object.emplace(), object.readable_padding)
               : decoder_.DecodePod(object.text, request.pod.emplace(), object.readable_padding);
  if (!decoded.ok()) return failed(decoded);
  if (request.ray_object) {
    KeepCostFacts(*request.ray_object, source, facts);
    SuspendedLoopFacts suspended;
    KeepSuspendedLoopFacts(*request.ray_object, facts.namespace_name, facts.name, source, suspended);
    if (!suspended.clusters.empty() || !suspended.jobs.empty() || !suspended.services.empty()) {
      facts.suspended = std::make_unique<const SuspendedLoopFacts>(std::move(suspended));
    }
  }
  HeadPod state{facts.name, request.pod ? std::string(request.pod->phase) : std::string(),
                request.pod && request.pod->metadata.deletion_requested};
  // A Pod on its way out (terminating) or done (Succeeded, Failed) is history: counted, not judged.
  if (request.pod && !IsLiveHead(state)) return Status::Ok();
  for (RuleFinding& f : ObjectFindings(request, policy_)) {
    facts.findings.push_back({std::move(f.rule), kind, facts.namespace_name, facts.name, std::move(f.field_path),
                              std::move(f.message), source});
  }
  if (!request.pod) return Status::Ok();
  const auto identity = IdentifyRayPod(*request.pod);
  if (!identity) return Status::Ok();
  if (identity->node_type == RayNodeType::kHead) {
    facts.across = HeadFact{std::string(identity->cluster), std::move(state)};
    return Status::Ok();
  }
  if (Status s = decoder_.WorkerSpecSignature(signature_); !s.ok()) return failed(s);
  facts.across = WorkerFact{std::string(identity->cluster), std::string(identity->group), facts.name,
                            std::hash<std::string>{}(signature_)};
  return Status::Ok();
}

}  // namespace ray_webhook
