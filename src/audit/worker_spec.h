// WorkerSpecOf and SpecDifferences: what the worker Pods of one group must
// share, and where two of them differ.
//
// Contract: pure functions of parsed Pods (nlohmann::json, depth already
// bounded by the Auditor). KubeRay builds every worker Pod of a group from
// the group's template (ray-operator/controllers/ray/common/pod.go, BuildPod,
// v1.6.2), so their specs agree except in what the API server, the scheduler
// or other controllers fill in per Pod. WorkerSpecOf keeps the Pod's spec and
// takes out:
//  - spec.nodeName (the scheduler), spec.hostname and spec.subdomain (set per
//    Pod by multi-host webhooks such as GKE's TPU webhook),
//    spec.ephemeralContainers (kubectl debug) and spec.schedulingGates
//    (removed per Pod as it is admitted to scheduling);
//  - the generated name of the service-account token volume,
//    "kube-api-access-<5 random>" (the ServiceAccount admission plugin), in
//    spec.volumes and in every container's volumeMounts;
//  - the values of env entries that multi-host webhooks fill per Pod
//    (TPU_WORKER_ID, TPU_WORKER_HOSTNAMES, TPU_NAME).
// KubeRay itself fills nothing per Pod in the spec: its per-Pod values are
// labels (ray.io/worker-group-replica-index) and valueFrom fieldRefs
// (RAY_CLOUD_INSTANCE_ID from metadata.name), which are equal in every spec.
// Metadata and status are not compared at all (names, uid, resourceVersion,
// creationTimestamp, ownerReferences, phase). SpecDifferences names at most
// `max` fields where `to` differs from `from`, as kubectl names them
// ("spec.containers[0].volumeMounts[3] (added)"), then "..." when there are
// more; a list item inserted or removed is one entry.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ray_webhook {

nlohmann::json WorkerSpecOf(const nlohmann::json& pod);

std::vector<std::string> SpecDifferences(const nlohmann::json& from, const nlohmann::json& to, std::size_t max);

}  // namespace ray_webhook
