// The deterministic head Pod name, and when it must not be used.
//
// Contract: pure functions. A fixed head name lets kube-apiserver refuse a
// second head with 409 AlreadyExists before anything is stored (KubeRay
// #3013, PR #3028). KubeRay turned it off again (v1.4.2, PR #3872) because
// Autoscaler v2 on Ray older than 2.48 breaks when a restarted head keeps its
// name (#3868); such heads keep a generated name and rely on the lookup.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/admission_request.h"

namespace ray_webhook {

// KubeRay's utils.PodName for the head, as the operator names heads with
// ENABLE_DETERMINISTIC_HEAD_POD_NAME: the cluster name lowercased and cut to
// its first 50 characters, plus "-head" (ray-operator/controllers/ray/utils/util.go).
std::string KubeRayHeadPodName(std::string_view cluster);

// The name ray-webhook gives a head: KubeRay's for a cluster name of at most
// 50 characters. A longer one would share KubeRay's name with every cluster
// of the same first 50 characters, as the old and the new cluster of a
// RayService upgrade do (`<service>-<5 random>` from KubeRay 1.4,
// `<service>-raycluster-<5 random>` before): it gets its first 49 characters
// (less a trailing '-' or '.'), '-', 8 hex digits of a hash (FNV-1a) of the
// whole lowercased name, and "-head": at most 63 characters, the same every
// time for the same cluster.
std::string DeterministicHeadPodName(std::string_view cluster);

// Either of the two: a head the operator named itself passes as it is.
bool IsDeterministicHeadPodName(std::string_view name, std::string_view cluster);

struct RayVersion {
  int major = 0;
  int minor = 0;
  friend bool operator<(RayVersion a, RayVersion b) {
    return a.major != b.major ? a.major < b.major : a.minor < b.minor;
  }
};

// The tag of an image reference ("rayproject/ray:2.9.0" -> "2.9.0"); empty
// when there is none (no tag, or a digest only; a registry port is no tag).
std::string_view ImageTag(std::string_view image);

// "2.48.0-py310-gpu" -> 2.48; nullopt for "nightly", "latest", "" and the like.
std::optional<RayVersion> ParseRayVersion(std::string_view tag);

inline constexpr RayVersion kFirstRayVersionSafeWithFixedHeadName{2, 48};

// True when the Ray container enables Autoscaler v2 (RAY_enable_autoscaler_v2
// is 1 or true) and its image is older than Ray 2.48 or of unknown version.
bool AutoscalerV2ForbidsFixedHeadName(const Pod& pod);

}  // namespace ray_webhook
