// DecodePod: the object decoder of a core/v1 Pod, and of a Pod template
// (metadata and spec are all a template has of a Pod).
//
// Contract: reads one bare Pod object with the caller's JsonReader; errors at
// paths relative to the Pod ("spec.containers[0].name: expected a string"),
// which the caller prefixes with where the Pod sits. Fills pod in place,
// reusing the storage of the lists it already has, so that decoding a Pod
// like the previous one into the same value allocates nothing; nothing of the
// previous Pod survives. Only the fields the rules read are kept: metadata
// (object_meta_decoder.h), containers, initContainers, ephemeralContainers,
// and status.phase for the audit of existing Pods (a status of the wrong type
// is no error: admission never judges it).
#pragma once

#include "ray_webhook/core/json/json_reader.h"
#include "ray_webhook/core/model/pod_view.h"

namespace ray_webhook {

// read_resources: also keep each container's resources (container_decoder.h); set for the
// templates of ray.io objects, not for a Pod under admission.
void DecodePod(od::object obj, JsonReader& r, Pod& pod, bool read_resources = false);

}  // namespace ray_webhook
