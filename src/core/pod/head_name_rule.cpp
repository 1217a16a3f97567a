#include "ray_webhook/core/pod/head_name_rule.h"

#include "ray_webhook/core/json/json_pointer.h"
#include "ray_webhook/core/model/admission_text.h"
#include "ray_webhook/core/pod/dns_name.h"
#include "ray_webhook/core/pod/head_pod_name.h"

namespace ray_webhook {

void PlanHeadName(const Pod& pod, const RayPodIdentity& identity, Decision& decision) {
  if (identity.node_type != RayNodeType::kHead || !pod.metadata.name.empty()) return;
  const std::string name = DeterministicHeadPodName(identity.cluster);
  if (AutoscalerV2ForbidsFixedHeadName(pod)) {
    decision.warnings.push_back(AdmissionWarning("head not named " + Quote(name) +
                                                 ": Autoscaler v2 on Ray < 2.48 breaks with a fixed head name "
                                                 "(KubeRay #3868)"));
    return;
  }
  if (!IsDnsSubdomain(name)) {
    decision.warnings.push_back(AdmissionWarning("head not named: " + Quote(name, 60) + " is not a valid Pod name"));
    return;
  }
  decision.patch.push_back({"add", JsonPointer({"metadata", "name"}), name});
  decision.mutations.push_back(Mutation::kHeadNamed);
  // Kubernetes ignores generateName once a name is set; left in place it turns
  // a duplicate into "the server was not able to generate a unique name".
  if (!pod.metadata.generate_name.empty()) {
    decision.patch.push_back({"remove", JsonPointer({"metadata", "generateName"}), {}});
  }
}

std::optional<Denial> CheckHeadName(const Pod& pod, const RayPodIdentity& identity, std::string_view request_name) {
  if (identity.node_type != RayNodeType::kHead) return std::nullopt;
  // kube-apiserver names every Pod before validating admission; without a name there is nothing to judge.
  const std::string_view actual = pod.metadata.name.empty() ? request_name : pod.metadata.name;
  const std::string expected = DeterministicHeadPodName(identity.cluster);
  if (actual.empty() || IsDeterministicHeadPodName(actual, identity.cluster) || AutoscalerV2ForbidsFixedHeadName(pod)) {
    return std::nullopt;
  }
  return Denial::Forbidden(
      kHeadNameRule, "head Pod " + Quote(actual) + " of RayCluster " + Quote(identity.cluster) + " must be named " +
                         Quote(expected) +
                         ": a fixed head name lets the API server refuse a second head, and two heads split a Ray "
                         "cluster. Install the mutating webhook (it sets the name), or enable the operator's "
                         "ENABLE_DETERMINISTIC_HEAD_POD_NAME; to turn this rule off, run the webhook with "
                         "--head-uniqueness=lookup or --head-name-mode=off (or warn).");
}

}  // namespace ray_webhook
