#include "ray_webhook/core/model/ray_cluster_spec.h"

namespace ray_webhook {

std::string_view RayObjectKindName(RayObjectKind kind) {
  switch (kind) {
    case RayObjectKind::kRayCluster: return "RayCluster";
    case RayObjectKind::kRayJob: return "RayJob";
    case RayObjectKind::kRayService: return "RayService";
    case RayObjectKind::kRayCronJob: return "RayCronJob";
  }
  return "RayCluster";
}

std::optional<RayObjectKind> RayObjectKindOf(const GroupVersionKind& kind) {
  // ray-operator/apis/ray/v1 and v1alpha1 (both served by KubeRay v1.6.2's CRDs).
  if (kind.group != "ray.io" || (kind.version != "v1" && kind.version != "v1alpha1")) return std::nullopt;
  if (kind.kind == "RayCluster") return RayObjectKind::kRayCluster;
  if (kind.kind == "RayJob") return RayObjectKind::kRayJob;
  if (kind.kind == "RayService") return RayObjectKind::kRayService;
  // RayCronJob is v1 only (ray-operator/apis/ray/v1/raycronjob_types.go, v1.6.0).
  if (kind.kind == "RayCronJob" && kind.version == "v1") return RayObjectKind::kRayCronJob;
  return std::nullopt;
}

std::string_view ClusterSpecPath(RayObjectKind kind) {
  switch (kind) {
    case RayObjectKind::kRayCluster: return "spec";
    case RayObjectKind::kRayJob: return "spec.rayClusterSpec";
    case RayObjectKind::kRayService: return "spec.rayClusterConfig";
    case RayObjectKind::kRayCronJob: return "spec.jobTemplate.rayClusterSpec";
  }
  return "spec";
}

}  // namespace ray_webhook
