#include "ray_webhook/pod_policy.h"

#include "ray_webhook/duplicate_env_rule.h"
#include "ray_webhook/duplicate_mount_rule.h"
#include "ray_webhook/fqdn_mutation.h"
#include "ray_webhook/ray_pod.h"

namespace ray_webhook {

std::string_view MutationName(Mutation mutation) {
  switch (mutation) {
    case Mutation::kFqRayIpAdded: return "fq_ray_ip_added";
    case Mutation::kRayIpAdded: return "ray_ip_added";
    case Mutation::kAddressRewritten: return "address_rewritten";
    case Mutation::kRayAddressRewritten: return "ray_address_rewritten";
  }
  return "unknown";
}

Decision Decide(const AdmissionRequest& request, Endpoint endpoint, const Config& config) {
  Decision decision;
  if (!request.IsPodCreate()) return decision;
  const Pod& pod = *request.pod;
  const auto identity = IdentifyRayPod(pod);

  if (auto denial = CheckDuplicateMounts(pod, identity)) {
    decision.Deny(std::move(*denial));
    return decision;
  }

  if (endpoint == Endpoint::kValidate) {
    WarnDuplicateEnv(pod, decision);
    return decision;
  }

  if (!identity || IsExemptFromMutation(pod)) return decision;
  // request.namespace is authoritative; the object's may be empty on CREATE.
  std::string_view ns = request.namespace_name.empty() ? pod.metadata.namespace_name : request.namespace_name;
  if (ns.empty()) {
    decision.warnings.push_back("ray-webhook: the request names no namespace; the head address was left as it is");
    return decision;
  }
  PlanFqdnMutation(pod, *identity, ns, config, decision);
  return decision;
}

}  // namespace ray_webhook
