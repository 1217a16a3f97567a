// TemplateFinding: what a rule over a RayCluster spec found, and where.
//
// Contract: plain data returned by the rules over ray.io objects
// (TemplateMountRule, ClusterHeadNameRule, TemplateAddressRule). PodPolicy
// alone turns findings into a denial (enforce: the details, joined) or into
// admission warnings (warn: one per finding, its summary); a rule never reads
// its mode.
#pragma once

#include <string>
#include <vector>

#include "ray_webhook/core/model/ray_cluster_spec.h"
#include "ray_webhook/core/pod/ray_pod.h"

namespace ray_webhook {

struct TemplateFinding {
  // The field of the object as kubectl names it, e.g.
  // "spec.workerGroupSpecs[1].template.spec.containers[0].volumeMounts[3]".
  std::string field_path;
  // Short, for an admission warning: what is wrong, without the field path.
  std::string summary;
  // The whole finding for a denial: the group, the field path, what is wrong
  // and its likely cause.
  std::string detail;
  friend bool operator==(const TemplateFinding&, const TemplateFinding&) = default;
};

// One group of a RayCluster spec as the rules see it.
struct TemplateGroup {
  const RayGroupSpec* spec;
  RayNodeType node_type;
  // As the Pods' label ray.io/group names it: "headgroup" for the head
  // (utils RayNodeHeadGroupLabelValue), else the group's groupName.
  std::string_view name;
  // "spec.headGroupSpec", "spec.rayClusterConfig.workerGroupSpecs[2]", ...
  std::string path;
};

// The head group (when present) and every worker group, in order.
std::vector<TemplateGroup> TemplateGroups(const RayObject& object);

}  // namespace ray_webhook
