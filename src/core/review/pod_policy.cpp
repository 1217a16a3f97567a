#include "ray_webhook/core/review/pod_policy.h"

#include <algorithm>

#include "ray_webhook/core/model/admission_text.h"
#include "ray_webhook/core/pod/cluster_head_name_rule.h"
#include "ray_webhook/core/pod/duplicate_env_rule.h"
#include "ray_webhook/core/pod/duplicate_mount_rule.h"
#include "ray_webhook/core/pod/fqdn_mutation.h"
#include "ray_webhook/core/pod/head_name_rule.h"
#include "ray_webhook/core/pod/head_pod_name.h"
#include "ray_webhook/core/pod/ray_pod.h"
#include "ray_webhook/core/pod/second_head_rule.h"
#include "ray_webhook/core/pod/template_address_rule.h"
#include "ray_webhook/core/pod/template_mount_rule.h"
#include "ray_webhook/core/spec/spec_admission.h"

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

// stored_name: the name the head-name rule judges (none: nothing to judge);
// own_name: the name the head lookup leaves out as the Pod itself.
void Validate(const AdmissionRequest& request, const std::optional<RayPodIdentity>& identity,
              std::string_view stored_name, std::string_view own_name, const PolicyConfig& policy,
              const HeadPodList* head_pods, Decision& decision) {
  const Pod& pod = *request.pod;
  if (identity && policy.head_uniqueness.name) {
    if (auto denial = CheckHeadName(pod, *identity, stored_name))
      decision.Apply(policy.head_name_mode, std::move(*denial));
    if (!decision.allowed) return;
  }
  if (identity && head_pods) {
    JudgeSecondHead(*head_pods, own_name, *identity, policy, decision);
    if (!decision.allowed) return;
  }
  for (std::string& warning : DuplicateEnvWarnings(pod)) decision.warnings.push_back(std::move(warning));
}

// More findings than this make an unreadable message or too many warnings
// (kube-apiserver keeps at most 4 KiB of them); the count says the rest.
constexpr std::size_t kMaxFindings = 5;

// The findings of a rule over a ray.io object under the rule's mode: enforce
// denies with every finding's detail, warn gives one warning per finding.
void ApplyFindings(RuleMode mode, Denial (*make)(std::string_view, std::string), std::string_view rule,
                   const RayObject& object, std::string_view name, std::string_view closing,
                   const std::vector<TemplateFinding>& findings, Decision& decision) {
  if (findings.empty() || mode == RuleMode::kOff) return;
  const std::size_t shown = std::min(findings.size(), kMaxFindings);
  if (mode == RuleMode::kWarn) {
    for (std::size_t k = 0; k < shown; ++k) {
      decision.warnings.push_back(
          AdmissionWarning(std::string(rule) + " (warn mode): " + findings[k].field_path + ": " + findings[k].summary,
                           kMaxFieldWarningRunes));
    }
    return;
  }
  std::string message(RayObjectKindName(object.kind));
  message += ' ';
  message += Quote(name, 63);
  message += ": ";
  for (std::size_t k = 0; k < shown; ++k) {
    if (k > 0) message += "; ";
    message += findings[k].detail;
  }
  if (findings.size() > shown) message += "; and " + std::to_string(findings.size() - shown) + " more";
  message += '.';
  message += closing;
  decision.Deny(make(rule, std::move(message)));
}

// On UPDATE, what the stored object already had was admitted before (or
// before the webhook was installed): only what the update brings counts, so
// the operator's own updates (finalizers, which it must also be able to remove)
// never fail on an old finding.
template <typename Check>
std::vector<TemplateFinding> NewFindings(Check check, const RayObject& object, const RayObject* old) {
  std::vector<TemplateFinding> now = check(object);
  if (old && !now.empty()) {
    const std::vector<TemplateFinding> before = check(*old);
    std::erase_if(now,
                  [&](const TemplateFinding& f) { return std::find(before.begin(), before.end(), f) != before.end(); });
  }
  return now;
}

// /validate of a RayCluster, RayJob, RayService or RayCronJob CREATE or
// UPDATE: the Pod rules applied to the Pods KubeRay would build from its
// templates, and KubeRay's spec checks.
void ValidateRayObject(const AdmissionRequest& request, const PolicyConfig& policy, Decision& decision) {
  const RayObject& object = *request.ray_object;
  const RayObject* old = request.operation == "UPDATE" && request.old_ray_object ? &*request.old_ray_object : nullptr;
  const std::string_view name = object.metadata.name.empty() ? request.name : object.metadata.name;
  if (policy.duplicate_mount_mode != RuleMode::kOff) {
    ApplyFindings(policy.duplicate_mount_mode, &Denial::Invalid, kDuplicateMountRule, object, name,
                  " Each mountPath must be unique within a container, so KubeRay could not create these Pods.",
                  NewFindings(CheckTemplateMounts, object, old), decision);
    if (!decision.allowed) return;
  }
  // KubeRay's own checks of the spec, which the operator would otherwise make
  // only when it reconciles the object.
  AdmitSpec(object, old, name, policy, decision);
  if (!decision.allowed) return;
  // A warning under enforce and warn alike: a denial would refuse exactly the
  // long-named clusters (a RayService's) whose heads the head-name mutation
  // names safely; the collision needs the operator to name heads itself. The
  // name cannot change after CREATE.
  if (policy.head_uniqueness.name && policy.head_name_mode != RuleMode::kOff && request.operation == "CREATE") {
    if (auto finding = CheckClusterHeadName(object, request.name)) {
      decision.warnings.push_back(AdmissionWarning(std::string(kHeadNameRule) + ": " + finding->field_path + ": " +
                                                       std::string(RayObjectKindName(object.kind)) + " " +
                                                       finding->summary,
                                                   kMaxFieldWarningRunes));
    }
  }
  // Warnings only: the FQDN mutation has no mode, and a bare name works where DNS resolves it.
  const std::vector<TemplateFinding> bare = NewFindings(CheckTemplateAddresses, object, old);
  for (std::size_t k = 0; k < bare.size() && k < kMaxFindings; ++k) {
    decision.warnings.push_back(AdmissionWarning(
        std::string(kBareAddressRule) + ": " + bare[k].field_path + ": " + bare[k].summary, kMaxFieldWarningRunes));
  }
}

// The name a Pod reviewed at /admit is stored under: the fixed head name the
// mutation sets, its own, or (generateName, no name) one kube-apiserver makes
// after mutating admission by adding 5 random characters
// (apiserver/pkg/storage/names/generate.go), which is never a fixed head name.
std::string NameAfterMutation(const AdmissionRequest& request, const std::optional<RayPodIdentity>& identity,
                              const Decision& decision) {
  if (identity && std::find(decision.mutations.begin(), decision.mutations.end(), Mutation::kHeadNamed) !=
                      decision.mutations.end()) {
    return DeterministicHeadPodName(identity->cluster);
  }
  const Pod& pod = *request.pod;
  if (!pod.metadata.name.empty()) return std::string(pod.metadata.name);
  if (!request.name.empty()) return std::string(request.name);
  if (!pod.metadata.generate_name.empty()) return std::string(pod.metadata.generate_name) + "<random>";
  return {};
}

}  // namespace

bool NeedsHeadLookup(const AdmissionRequest& request, Endpoint endpoint, const PolicyConfig& policy) {
  if (endpoint == Endpoint::kMutate || !request.IsPodCreate()) return false;
  if (!policy.head_uniqueness.lookup || policy.second_head_mode == RuleMode::kOff) return false;
  const auto identity = IdentifyRayPod(*request.pod);
  return identity && identity->node_type == RayNodeType::kHead;
}

Decision Decide(const AdmissionRequest& request, Endpoint endpoint, const PolicyConfig& policy,
                const HeadPodList* head_pods) {
  Decision decision;
  if (request.IsRayObjectWrite()) {
    if (endpoint != Endpoint::kMutate) ValidateRayObject(request, policy, decision);
    return decision;
  }
  if (!request.IsPodCreate()) return decision;
  const Pod& pod = *request.pod;
  const auto identity = IdentifyRayPod(pod);

  if (auto denial = CheckDuplicateMounts(pod, identity)) {
    decision.Apply(policy.duplicate_mount_mode, std::move(*denial));
    if (!decision.allowed) return decision;
  }
  switch (endpoint) {
    case Endpoint::kMutate:
      if (identity) Mutate(request, *identity, policy, decision);
      break;
    case Endpoint::kValidate:
      Validate(request, identity, request.name, request.PodName(), policy, head_pods, decision);
      break;
    case Endpoint::kAdmit: {
      if (identity) Mutate(request, *identity, policy, decision);
      const std::string name = NameAfterMutation(request, identity, decision);
      Validate(request, identity, name, name, policy, head_pods, decision);
      // A refusal carries no patch: nothing was changed.
      if (!decision.allowed) {
        decision.patch.clear();
        decision.mutations.clear();
      }
      break;
    }
  }
  return decision;
}

}  // namespace ray_webhook
