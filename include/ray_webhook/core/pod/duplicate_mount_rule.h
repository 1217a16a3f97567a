// DuplicateMountRule: no container may mount two volumes at one path.
//
// Contract: looks at containers, initContainers and ephemeralContainers of any
// Pod, Ray or not. Paths are compared after cleaning ("/dev/shm/" and
// "/dev/shm" are the same mount point to the runtime). Returns a denial whose
// message names each container, path and count and, for a Ray Pod, the
// RayCluster, group and the likely cause of each duplicate, from the volume
// KubeRay adds at its path: /dev/shm "shared-mem", a worker template changed
// in place by a shallow copy (KubeRay #688, root cause PR #714); token auth's
// "ray-token"; the /tmp/ray log volume "ray-logs" of the autoscaler or the
// history-server collector (its own cause in the collector sidecar
// "ray-history-collector"); mTLS's "ray-tls"; on a head, the embedded GCS
// store "gcs-storage" at /data/gcs (KubeRay 1.7). A duplicate with none of them
// says its origin is unknown rather than guess. nullopt when every path is
// unique.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/admission_request.h"
#include "ray_webhook/core/model/decision.h"
#include "ray_webhook/core/pod/ray_pod.h"

namespace ray_webhook {

inline constexpr std::string_view kDuplicateMountRule = "duplicate-mount";

// "/a//b/./c/" -> "/a/b/c". Keeps ".." (a runtime resolves it against the
// container's root, which this rule cannot see).
std::string CleanMountPath(std::string_view path);

// Why KubeRay put a mount of this volume into a Pod it built (at the path it
// uses for it), or empty for a volume KubeRay does not add.
std::string_view KubeRayMountCause(std::string_view volume);

std::optional<Denial> CheckDuplicateMounts(const Pod& pod, const std::optional<RayPodIdentity>& identity);

}  // namespace ray_webhook
