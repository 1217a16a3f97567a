// WriteWorkerSpecSignature: the worker spec signature of a Pod, the text in
// which every worker Pod of one group agrees, so that the audit compares
// Pods by comparing texts.
//
// Contract: KubeRay builds every worker Pod of a group from the group's
// template (ray-operator/controllers/ray/common/pod.go, BuildPod, v1.6.2),
// so their specs agree except in what the API server, the scheduler or other
// controllers fill in per Pod. The signature is the Pod's spec without:
//  - spec.nodeName (the scheduler), spec.hostname and spec.subdomain (set per
//    Pod by multi-host webhooks such as GKE's TPU webhook),
//    spec.ephemeralContainers (kubectl debug) and spec.schedulingGates
//    (removed per Pod as it is admitted to scheduling);
//  - the generated name of the service-account token volume,
//    "kube-api-access-<5 lowercase letters or digits>" (the ServiceAccount
//    admission plugin), in spec.volumes and in the volumeMounts of every
//    container and init container: it reads "kube-api-access";
//  - the values of env entries that multi-host webhooks fill per Pod
//    (TPU_WORKER_ID, TPU_WORKER_HOSTNAMES, TPU_NAME) in containers and init
//    containers.
// KubeRay itself fills nothing per Pod in the spec: its per-Pod values are
// labels (ray.io/worker-group-replica-index) and valueFrom fieldRefs
// (RAY_CLOUD_INSTANCE_ID from metadata.name), which are equal in every spec.
// Metadata and status are not part of it. The text is JSON, minified, with
// the keys of every object sorted (bytewise, as written) so that key order
// does not matter, and a repeated key's last value kept; strings, keys and
// numbers keep their spelling (the API server writes one spelling for one
// value). No spec, or a null one, is "{}". Reads raw tokens only, never the
// parser's string buffer, so it can run over a rewound document without
// spoiling the views an earlier walk of it decoded. Nesting beyond
// kMaxSignatureDepth levels under spec fails.
#pragma once

#include <cstddef>
#include <string>

#include "ray_webhook/core/json/json_reader.h"

namespace ray_webhook {

inline constexpr std::size_t kMaxSignatureDepth = 128;

// pod: the Pod's root object; out is replaced.
void WriteWorkerSpecSignature(od::object pod, JsonReader& r, std::string& out);

}  // namespace ray_webhook
