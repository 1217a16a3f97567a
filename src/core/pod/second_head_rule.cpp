#include "ray_webhook/core/pod/second_head_rule.h"

#include "ray_webhook/core/model/admission_text.h"

namespace ray_webhook {

std::optional<Denial> CheckSecondHead(const std::vector<HeadPod>& heads, std::string_view own_name,
                                      const RayPodIdentity& identity) {
  for (const HeadPod& pod : heads) {
    if (pod.name == own_name || !IsLiveHead(pod)) continue;
    return Denial::Conflict(
        kSecondHeadRule, "RayCluster " + Quote(identity.cluster) + " already has a live head Pod " + Quote(pod.name) +
                             " (phase " + (pod.phase.empty() ? std::string("unknown") : pod.phase) +
                             "); a second head splits the cluster, as workers behind the head service join "
                             "different heads. Delete the extra head Pod or wait for it to terminate; to turn "
                             "this check off, run the webhook with --head-uniqueness=name or "
                             "--second-head-mode=off.");
  }
  return std::nullopt;
}

std::string SecondHeadLookupFailure(const RayPodIdentity& identity, const Status& lookup) {
  return "could not check RayCluster " + Quote(identity.cluster) +
         " for another head Pod: " + lookup.message().substr(0, 200);
}

}  // namespace ray_webhook
