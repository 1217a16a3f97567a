#include "ray_webhook/core/pod_policy.h"

#include "duplicate_env_rule.h"
#include "duplicate_mount_rule.h"
#include "fqdn_mutation.h"
#include "head_name_rule.h"
#include "ray_webhook/core/admission_text.h"
#include "ray_webhook/core/ray_pod.h"
#include "second_head_rule.h"

namespace ray_webhook {
namespace {

void Mutate(const AdmissionRequest& request, const RayPodIdentity& identity, const PolicyConfig& policy,
            Decision& decision) {
  const Pod& pod = *request.pod;
  if (IsExemptFromMutation(pod)) return;
  const std::string_view ns = request.PodNamespace();
  if (ns.empty()) {
    decision.warnings.push_back("ray-webhook: the request names no namespace; the head address was left as it is");
  } else {
    PlanFqdnMutation(pod, identity, ns, policy.cluster_domain, decision);
  }
  if (policy.head_uniqueness.name && policy.head_name_mode != RuleMode::kOff) PlanHeadName(pod, identity, decision);
}

void JudgeSecondHead(const HeadPodList& heads, std::string_view own_name, const RayPodIdentity& identity,
                     const PolicyConfig& policy, Decision& decision) {
  if (!heads.ok()) {
    const std::string why = SecondHeadLookupFailure(identity, heads.status());
    if (policy.deny_on_lookup_failure && policy.second_head_mode == RuleMode::kEnforce) {
      decision.Deny(Denial::Unavailable(kSecondHeadRule, why + ". Denied because the webhook runs with "
                                                               "--head-lookup-failure=deny; retry once the "
                                                               "Kubernetes API answers."));
    } else {
      decision.warnings.push_back(AdmissionWarning(why));
    }
    return;
  }
  if (auto denial = CheckSecondHead(*heads, own_name, identity))
    decision.Apply(policy.second_head_mode, std::move(*denial));
}

void Validate(const AdmissionRequest& request, const std::optional<RayPodIdentity>& identity,
              const PolicyConfig& policy, const HeadPodList* head_pods, Decision& decision) {
  const Pod& pod = *request.pod;
  if (identity && policy.head_uniqueness.name) {
    if (auto denial = CheckHeadName(pod, *identity, request.name))
      decision.Apply(policy.head_name_mode, std::move(*denial));
    if (!decision.allowed) return;
  }
  if (identity && head_pods) {
    JudgeSecondHead(*head_pods, request.PodName(), *identity, policy, decision);
    if (!decision.allowed) return;
  }
  for (std::string& warning : DuplicateEnvWarnings(pod)) decision.warnings.push_back(std::move(warning));
}

}  // namespace

bool NeedsHeadLookup(const AdmissionRequest& request, Endpoint endpoint, const PolicyConfig& policy) {
  if (endpoint != Endpoint::kValidate || !request.IsPodCreate()) return false;
  if (!policy.head_uniqueness.lookup || policy.second_head_mode == RuleMode::kOff) return false;
  const auto identity = IdentifyRayPod(*request.pod);
  return identity && identity->node_type == RayNodeType::kHead;
}

Decision Decide(const AdmissionRequest& request, Endpoint endpoint, const PolicyConfig& policy,
                const HeadPodList* head_pods) {
  Decision decision;
  if (!request.IsPodCreate()) return decision;
  const Pod& pod = *request.pod;
  const auto identity = IdentifyRayPod(pod);

  if (auto denial = CheckDuplicateMounts(pod, identity)) {
    decision.Apply(policy.duplicate_mount_mode, std::move(*denial));
    if (!decision.allowed) return decision;
  }
  if (endpoint == Endpoint::kValidate) {
    Validate(request, identity, policy, head_pods, decision);
  } else if (identity) {
    Mutate(request, *identity, policy, decision);
  }
  return decision;
}

}  // namespace ray_webhook
