#include "ray_webhook/core/pod/template_finding.h"

#include <string>

namespace ray_webhook {

std::vector<TemplateGroup> TemplateGroups(const RayObject& object) {
  std::vector<TemplateGroup> groups;
  if (!object.cluster) return groups;
  const RayClusterSpecView& spec = *object.cluster;
  const std::string base(ClusterSpecPath(object.kind));
  if (spec.has_head_group)
    groups.push_back({&spec.head_group, RayNodeType::kHead, "headgroup", base + ".headGroupSpec"});
  for (std::size_t i = 0; i < spec.worker_groups.size(); ++i) {
    const RayGroupSpec& g = spec.worker_groups[i];
    groups.push_back({&g, RayNodeType::kWorker, g.group_name, base + ".workerGroupSpecs[" + std::to_string(i) + "]"});
  }
  return groups;
}

}  // namespace ray_webhook
