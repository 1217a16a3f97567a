#include "ray_webhook/second_head_rule.h"

#include "ray_webhook/admission_text.h"

namespace ray_webhook {

bool IsLiveHead(const PodSummary& pod) {
  return !pod.terminating && pod.phase != "Succeeded" && pod.phase != "Failed";
}

void JudgeSecondHead(const PodListResult& heads, std::string_view own_name, const RayPodIdentity& identity,
                     const Config& config, Decision& decision) {
  if (!heads.ok) {
    const std::string why = "could not check RayCluster " + Quote(identity.cluster) +
                            " for another head Pod: " + heads.error.substr(0, 200);
    if (config.deny_on_lookup_failure && config.second_head_mode == RuleMode::kEnforce) {
      decision.Deny({503, "ServiceUnavailable", std::string(kSecondHeadRule),
                     why + ". Denied because the webhook runs with --head-lookup-failure=deny; retry once the "
                           "Kubernetes API answers."});
    } else {
      decision.warnings.push_back(AdmissionWarning(why));
    }
    return;
  }
  for (const PodSummary& pod : heads.pods) {
    if (pod.name == own_name || !IsLiveHead(pod)) continue;
    decision.Apply(config.second_head_mode,
                   {409, "Conflict", std::string(kSecondHeadRule),
                    "RayCluster " + Quote(identity.cluster) + " already has a live head Pod " + Quote(pod.name) +
                        " (phase " + (pod.phase.empty() ? std::string("unknown") : pod.phase) +
                        "); a second head splits the cluster, as workers behind the head service join "
                        "different heads. Delete the extra head Pod or wait for it to terminate; to turn "
                        "this check off, run the webhook with --head-uniqueness=name or --second-head-mode=off."});
    return;
  }
}

}  // namespace ray_webhook
