// TemplateMountRule: duplicate mount paths in the Pods KubeRay would build
// from a RayCluster's (RayJob's, RayService's) group templates.
//
// Contract: pure. For every group, each container of its template is given
// the mounts the operator adds to it (ray-operator/controllers/ray/common/pod.go,
// v1.6.2; mTLS from v1.7), each added exactly when the operator adds it:
//  - the Ray container: "shared-mem" at /dev/shm unless rayStartParams sets
//    plasma-directory or the container already mounts exactly "/dev/shm"
//    (BuildPod, addEmptyDir checks the path as written); "ray-logs" at
//    /tmp/ray in the head with enableInTreeAutoscaling, unless exactly
//    "/tmp/ray" is mounted; "ray-token" at /var/run/secrets/ray.io/serviceaccount
//    with authOptions mode token and enableK8sTokenAuth, unless a mount NAMED
//    ray-token exists (SetContainerTokenAuthEnvVars); "ray-tls" at /etc/ray/tls
//    with tlsOptions.enabled, unless one of that name or exactly that path
//    exists (SetContainerTLSConfig);
//  - the autoscaler sidecar of a head with enableInTreeAutoscaling, which the
//    operator builds itself: "ray-token" and "ray-tls" as above, then
//    autoscalerOptions.volumeMounts, then "ray-logs" unless exactly "/tmp/ray"
//    is mounted.
// Init containers keep their template mounts; wait-gcs-ready copies the Ray
// container's and gets the same additions, so its duplicates are the Ray
// container's and are not reported twice. Paths are compared after
// CleanMountPath, as DuplicateMountRule compares them. Returns one finding per
// duplicated path, naming the mount of the template (or of autoscalerOptions)
// that collides, in group order; at most kMaxTemplateMountFindings of them,
// each naming at most five volumes, so a hostile object gets a bounded answer.
#pragma once

#include <string_view>
#include <vector>

#include "ray_webhook/core/model/ray_cluster_spec.h"
#include "ray_webhook/core/pod/template_finding.h"

namespace ray_webhook {

inline constexpr std::size_t kMaxTemplateMountFindings = 100;

std::vector<TemplateFinding> CheckTemplateMounts(const RayObject& object);

}  // namespace ray_webhook
