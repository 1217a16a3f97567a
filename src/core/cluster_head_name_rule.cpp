#include "cluster_head_name_rule.h"

#include <string>

#include "head_pod_name.h"
#include "ray_webhook/core/admission_text.h"

namespace ray_webhook {
namespace {

// utils.PodName's maxPrefixLength.
constexpr std::size_t kKubeRayPrefix = 50;
// utils.GenerateRayClusterName: "<name>-" plus 5 random characters.
constexpr std::size_t kRandomSuffix = 5;

}  // namespace

std::optional<TemplateFinding> CheckClusterHeadName(const RayObject& object, std::string_view request_name) {
  if (object.uses_cluster_selector || !object.cluster) return std::nullopt;
  const std::string_view name = object.metadata.name.empty() ? request_name : object.metadata.name;
  if (name.empty()) return std::nullopt;
  const bool child = object.kind != RayObjectKind::kRayCluster;
  const std::size_t cluster_length = child ? name.size() + 1 + kRandomSuffix : name.size();
  if (cluster_length <= kKubeRayPrefix) return std::nullopt;

  const std::string kind(RayObjectKindName(object.kind));
  TemplateFinding f;
  f.field_path = "metadata.name";
  f.summary = kind + " name of " + std::to_string(name.size()) +
              " characters: its cluster's head Pod name under KubeRay's naming can collide (the first 50 "
              "characters of the cluster name)";
  std::string& d = f.detail;
  d = "its name (metadata.name) has " + std::to_string(name.size()) + " characters; ";
  if (!child) {
    d += "KubeRay's deterministic head Pod name keeps its first 50, " + Quote(KubeRayHeadPodName(name)) +
         ", which every RayCluster in this namespace whose name starts with the same 50 characters shares, so the "
         "second cluster's head is refused (409 AlreadyExists)";
  } else {
    const std::size_t kept = name.size() + 1 >= kKubeRayPrefix ? 0 : kKubeRayPrefix - name.size() - 1;
    d += std::string("its RayCluster") + (object.kind == RayObjectKind::kRayService ? "s are" : " is") + " named " +
         Quote(std::string(name) + "-") + " plus 5 random characters, of which KubeRay's deterministic " +
         "head Pod name (the first 50 characters, plus \"-head\") keeps " + std::to_string(kept) + ", so ";
    d += object.kind == RayObjectKind::kRayService
             ? "the old and the new cluster of an upgrade can get the same head name; the new head is then refused "
               "(409 AlreadyExists) and the upgrade never completes"
             : "its head can get the name of the head of another RayJob's cluster whose name starts the same, and is "
               "then refused (409 AlreadyExists)";
  }
  d += ". This happens when the operator names head Pods itself (ENABLE_DETERMINISTIC_HEAD_POD_NAME=true); "
       "ray-webhook's own head names hash the whole cluster name";
  if (!child) d += " (" + Quote(DeterministicHeadPodName(name)) + ")";
  d += ". Use a name of at most " + std::to_string(child ? kKubeRayPrefix - 1 - kRandomSuffix : kKubeRayPrefix) +
       " characters";
  return f;
}

}  // namespace ray_webhook
