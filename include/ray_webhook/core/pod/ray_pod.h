// Which Pods are Ray Pods, and the names KubeRay derives from them.
//
// Contract: pure functions of the decoded Pod. A Pod is a Ray Pod when label
// ray.io/node-type is "head" or "worker" and ray.io/cluster is non-empty
// (KubeRay's own identification: labels ray.io/cluster + ray.io/node-type).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/admission_request.h"

namespace ray_webhook {

inline constexpr std::string_view kClusterLabel = "ray.io/cluster";
inline constexpr std::string_view kNodeTypeLabel = "ray.io/node-type";
inline constexpr std::string_view kGroupLabel = "ray.io/group";
// Static Pods' mirrors are created by the kubelet and must not be mutated
// (Kubernetes admission webhook good practices).
inline constexpr std::string_view kMirrorPodAnnotation = "kubernetes.io/config.mirror";
// The project's opt-out: a Pod annotated ray-webhook.io/skip: "true" is not mutated.
inline constexpr std::string_view kOptOutAnnotation = "ray-webhook.io/skip";

enum class RayNodeType { kHead, kWorker };

struct RayPodIdentity {
  RayNodeType node_type;
  std::string_view cluster;
  std::string_view group;  // ray.io/group; may be empty
};

// nullopt for non-Ray Pods, including KubeRay's redis-cleanup Pods
// (ray.io/node-type=redis-cleanup).
std::optional<RayPodIdentity> IdentifyRayPod(const Pod& pod);

// True for mirror Pods and Pods that opted out; such Pods are never mutated.
bool IsExemptFromMutation(const Pod& pod);

// The Ray container, found as the operator that built the Pod found it: the
// first container with env ray=true, else containers[0]. KubeRay <= 0.6 looks
// for the marker (getRayContainerIndex in ray-operator/controllers/ray/common/pod.go
// at v0.3.0 to v0.6.0); from 1.0.0 it is always containers[0] (PR #1379), and
// the operator's own Pods never carry the marker elsewhere. nullopt without containers.
std::optional<std::size_t> RayContainerIndex(const Pod& pod);
const Container* RayContainer(const Pod& pod);

// The first env entry with this name, or nullptr.
const EnvVar* FindEnv(const Container& container, std::string_view name);

// The head service's name as this Pod knows it, since the operator that built
// the Pod knew the real name (a custom headService overrides it verbatim):
// from the first `--address` in the Ray container whose host is a bare
// service name, or that name already made "<name>.<namespace>.svc.<domain>"
// (so a mutated Pod names the same service again: idempotence); else a bare
// RAY_IP in the Ray container, else in an init container; else KubeRay's
// default "<cluster>-head-svc" (GenerateHeadServiceName).
std::string HeadServiceName(const Pod& pod, const RayPodIdentity& identity, std::string_view namespace_name,
                            std::string_view cluster_domain);

// "<service>.<namespace>.svc.<cluster-domain>", KubeRay's FQ_RAY_IP.
std::string HeadServiceFqdn(std::string_view service, std::string_view namespace_name, std::string_view cluster_domain);

}  // namespace ray_webhook
