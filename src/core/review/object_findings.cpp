#include "ray_webhook/core/review/object_findings.h"

#include <algorithm>
#include <cctype>

#include "ray_webhook/core/model/admission_text.h"
#include "ray_webhook/core/pod/cluster_head_name_rule.h"
#include "ray_webhook/core/pod/duplicate_env_rule.h"
#include "ray_webhook/core/pod/duplicate_mount_rule.h"
#include "ray_webhook/core/pod/fqdn_mutation.h"
#include "ray_webhook/core/pod/head_name_rule.h"
#include "ray_webhook/core/pod/ray_pod.h"
#include "ray_webhook/core/pod/template_address_rule.h"
#include "ray_webhook/core/pod/template_mount_rule.h"
#include "ray_webhook/core/spec/spec_admission.h"

namespace ray_webhook {
namespace {

// "/spec/containers/0/env/-" -> "spec.containers[0].env", as kubectl names fields.
std::string FieldPathOf(std::string_view pointer) {
  std::string out;
  while (!pointer.empty()) {
    pointer.remove_prefix(1);  // the '/'
    const std::size_t end = pointer.find('/');
    const std::string_view segment = pointer.substr(0, end);
    pointer = end == std::string_view::npos ? std::string_view() : pointer.substr(end);
    if (segment == "-") continue;
    const bool index = !segment.empty() && std::all_of(segment.begin(), segment.end(), [](char c) {
      return std::isdigit(static_cast<unsigned char>(c)) != 0;
    });
    if (index) {
      out += "[" + std::string(segment) + "]";
    } else {
      if (!out.empty()) out += '.';
      out += segment;
    }
  }
  return out;
}

void PodFindings(const AdmissionRequest& request, const PolicyConfig& policy, std::vector<RuleFinding>& out) {
  const Pod& pod = *request.pod;
  const auto identity = IdentifyRayPod(pod);
  if (policy.duplicate_mount_mode != RuleMode::kOff) {
    if (auto denial = CheckDuplicateMounts(pod, identity)) out.push_back({denial->rule, "", denial->message});
  }
  if (identity && policy.head_uniqueness.name && policy.head_name_mode != RuleMode::kOff) {
    if (auto denial = CheckHeadName(pod, *identity, request.name))
      out.push_back({denial->rule, "metadata.name", denial->message});
  }
  for (std::string& warning : DuplicateEnvWarnings(pod)) out.push_back({"duplicate-env", "", std::move(warning)});
  if (!identity || IsExemptFromMutation(pod) || request.PodNamespace().empty()) return;
  Decision planned;
  PlanFqdnMutation(pod, *identity, request.PodNamespace(), policy.cluster_domain, planned);
  if (planned.patch.empty()) return;
  std::string message = "the FQDN mutation would still change this Ray Pod (";
  for (std::size_t k = 0; k < planned.mutations.size(); ++k) {
    const Mutation m = planned.mutations[k];
    if (std::find(planned.mutations.begin(), planned.mutations.begin() + static_cast<std::ptrdiff_t>(k), m) !=
        planned.mutations.begin() + static_cast<std::ptrdiff_t>(k)) {
      continue;  // named once
    }
    if (message.back() != '(') message += ", ";
    message += MutationName(m);
  }
  message += " at ";
  constexpr std::size_t kShownOperations = 4;
  for (std::size_t k = 0; k < planned.patch.size() && k < kShownOperations; ++k) {
    if (k > 0) message += ", ";
    message += FieldPathOf(planned.patch[k].path);
  }
  if (planned.patch.size() > kShownOperations) message += ", ...";
  message +=
      "): it was created without ray-webhook's mutating webhook (before it was installed, while it was "
      "unreachable under failurePolicy Ignore, or outside its selectors), so it reaches its head by a bare "
      "service name. Recreate it (delete the Pod; the operator makes a new one) with the webhook running.";
  out.push_back({std::string(kUnmutatedRule), FieldPathOf(planned.patch.front().path), std::move(message)});
}

void RayObjectFindings(const AdmissionRequest& request, const PolicyConfig& policy, std::vector<RuleFinding>& out) {
  const RayObject& object = *request.ray_object;
  if (policy.duplicate_mount_mode != RuleMode::kOff) {
    for (TemplateFinding& f : CheckTemplateMounts(object))
      out.push_back({std::string(kDuplicateMountRule), std::move(f.field_path), std::move(f.detail)});
  }
  if (policy.head_uniqueness.name && policy.head_name_mode != RuleMode::kOff) {
    if (auto f = CheckClusterHeadName(object, request.name)) {
      out.push_back({std::string(kHeadNameRule), std::move(f->field_path),
                     std::string(RayObjectKindName(object.kind)) + " " + f->detail});
    }
  }
  for (TemplateFinding& f : CheckTemplateAddresses(object))
    out.push_back({std::string(kBareAddressRule), std::move(f.field_path), std::move(f.detail)});
  // KubeRay's spec checks, each under its own rule id; off-mode rules report nothing.
  bool unreadable = false;
  for (SpecFinding& f : NewSpecFindings(object, nullptr, policy, &unreadable))
    out.push_back({std::move(f.rule), std::move(f.field_path), std::move(f.message)});
  if (unreadable) {
    out.push_back(
        {std::string(kKubeRaySpecRule), "", "the object's JSON did not parse, so KubeRay's spec checks were skipped"});
  }
}

}  // namespace

std::vector<RuleFinding> ObjectFindings(const AdmissionRequest& request, const PolicyConfig& policy) {
  std::vector<RuleFinding> out;
  if (request.pod) {
    PodFindings(request, policy, out);
  } else if (request.ray_object) {
    RayObjectFindings(request, policy, out);
  }
  return out;
}

}  // namespace ray_webhook
