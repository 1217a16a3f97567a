#include "ray_webhook/core/pod/cluster_head_name_rule.h"

#include <string>

#include "ray_webhook/core/model/admission_text.h"
#include "ray_webhook/core/pod/head_pod_name.h"

namespace ray_webhook {
namespace {

// utils.PodName's maxPrefixLength.
constexpr std::size_t kKubeRayPrefix = 50;
// utils.GenerateRayClusterName: "<name>-" plus 5 random characters.
constexpr std::size_t kRandomSuffix = 5;
// utils.RayOriginatedFromCRDLabelKey, on the RayClusters of a RayService or RayJob.
constexpr std::string_view kOriginatedFromCrdLabel = "ray.io/originated-from-crd";

}  // namespace

std::optional<TemplateFinding> CheckClusterHeadName(const RayObject& object, std::string_view request_name) {
  if (object.uses_cluster_selector || !object.cluster) return std::nullopt;
  // A RayService's or RayJob's own cluster (labelled so by the operator,
  // rayservice_controller.go and rayjob_controller.go): its owner was judged.
  if (object.kind == RayObjectKind::kRayCluster && Lookup(object.metadata.labels, kOriginatedFromCrdLabel)) {
    return std::nullopt;
  }
  const std::string_view name = object.metadata.name.empty() ? request_name : object.metadata.name;
  if (name.empty()) return std::nullopt;
  const bool child = object.kind != RayObjectKind::kRayCluster;
  const std::size_t cluster_length = child ? name.size() + 1 + kRandomSuffix : name.size();
  if (cluster_length <= kKubeRayPrefix) return std::nullopt;

  TemplateFinding f;
  f.field_path = "metadata.name";
  std::string& s = f.summary;
  s = "name of " + std::to_string(name.size()) + " characters: with ENABLE_DETERMINISTIC_HEAD_POD_NAME ";
  if (!child) {
    s += "its head is " + Quote(KubeRayHeadPodName(name)) + ", as for every RayCluster starting the same";
  } else {
    const std::size_t kept = name.size() + 1 >= kKubeRayPrefix ? 0 : kKubeRayPrefix - name.size() - 1;
    s += "its clusters' heads keep " + std::to_string(kept) + " of 5 random characters, so " +
         (object.kind == RayObjectKind::kRayService ? "an upgrade's two clusters" : "clusters") + " can share one";
  }
  s += "; use at most " + std::to_string(child ? kKubeRayPrefix - 1 - kRandomSuffix : kKubeRayPrefix) + " characters";
  // Only ever a warning (PodPolicy): nothing longer to say in a denial.
  f.detail = f.summary;
  return f;
}

}  // namespace ray_webhook
