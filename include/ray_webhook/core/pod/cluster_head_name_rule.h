// ClusterHeadNameRule: a RayCluster name too long for KubeRay's head Pod name.
//
// Contract: pure. KubeRay's deterministic head Pod name (utils.PodName, used
// when the operator runs with ENABLE_DETERMINISTIC_HEAD_POD_NAME) keeps the
// first 50 characters of the cluster name, so clusters whose names agree in
// them share one head name and the second head is refused with 409 (see
// head_pod_name.h). The cluster is the RayCluster itself, or the one a RayJob
// or RayService creates, named "<name>-<5 random>" (utils.GenerateRayClusterName).
// Returns a finding at metadata.name when that cluster name has more than 50
// characters, saying how many of the random characters survive; nothing for
// a RayJob on an existing cluster (clusterSelector), for the RayCluster the
// operator makes for a RayService or RayJob (label ray.io/originated-from-crd:
// its owner was judged), or when no name is known. The collision needs the
// operator to name heads itself; ray-webhook's own head names hash a long
// cluster name, so PodPolicy makes the finding a warning, never a denial.
#pragma once

#include <optional>
#include <string_view>

#include "ray_webhook/core/model/ray_cluster_spec.h"
#include "ray_webhook/core/pod/template_finding.h"

namespace ray_webhook {

// request_name: the request's name, for an object that has none of its own yet.
std::optional<TemplateFinding> CheckClusterHeadName(const RayObject& object, std::string_view request_name);

}  // namespace ray_webhook
