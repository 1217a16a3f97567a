#include "ray_webhook/pod_policy.h"

#include "ray_webhook/duplicate_env_rule.h"
#include "ray_webhook/duplicate_mount_rule.h"
#include "ray_webhook/fqdn_mutation.h"
#include "ray_webhook/head_name_rule.h"
#include "ray_webhook/ray_pod.h"
#include "ray_webhook/second_head_rule.h"

namespace ray_webhook {
namespace {

void Mutate(const AdmissionRequest& request, const RayPodIdentity& identity, const Config& config,
            Decision& decision) {
  const Pod& pod = *request.pod;
  if (IsExemptFromMutation(pod)) return;
  const std::string_view ns = request.PodNamespace();
  if (ns.empty()) {
    decision.warnings.push_back("ray-webhook: the request names no namespace; the head address was left as it is");
  } else {
    PlanFqdnMutation(pod, identity, ns, config, decision);
  }
  if (config.head_uniqueness.name && config.head_name_mode != RuleMode::kOff) PlanHeadName(pod, identity, decision);
}

void Validate(const AdmissionRequest& request, const std::optional<RayPodIdentity>& identity, const Config& config,
              const PodListResult* head_pods, Decision& decision) {
  const Pod& pod = *request.pod;
  if (identity && config.head_uniqueness.name) {
    if (auto denial = CheckHeadName(pod, *identity, request.name)) decision.Apply(config.head_name_mode, std::move(*denial));
    if (!decision.allowed) return;
  }
  if (identity && head_pods) {
    JudgeSecondHead(*head_pods, request.PodName(), *identity, config, decision);
    if (!decision.allowed) return;
  }
  WarnDuplicateEnv(pod, decision);
}

}  // namespace

bool NeedsHeadLookup(const AdmissionRequest& request, Endpoint endpoint, const Config& config) {
  if (endpoint != Endpoint::kValidate || !request.IsPodCreate()) return false;
  if (!config.head_uniqueness.lookup || config.second_head_mode == RuleMode::kOff || !config.kube_api.configured()) {
    return false;
  }
  const auto identity = IdentifyRayPod(*request.pod);
  return identity && identity->node_type == RayNodeType::kHead;
}

Decision Decide(const AdmissionRequest& request, Endpoint endpoint, const Config& config,
                const PodListResult* head_pods) {
  Decision decision;
  if (!request.IsPodCreate()) return decision;
  const Pod& pod = *request.pod;
  const auto identity = IdentifyRayPod(pod);

  if (auto denial = CheckDuplicateMounts(pod, identity)) {
    decision.Apply(config.duplicate_mount_mode, std::move(*denial));
    if (!decision.allowed) return decision;
  }
  if (endpoint == Endpoint::kValidate) {
    Validate(request, identity, config, head_pods, decision);
  } else if (identity) {
    Mutate(request, *identity, config, decision);
  }
  return decision;
}

}  // namespace ray_webhook
