// DecodeClusterSpec: the decoder of a RayClusterSpec, the part of a
// RayCluster, RayJob or RayService that says how KubeRay builds the Pods.
//
// Contract: reads one bare RayClusterSpec object
// (ray-operator/apis/ray/v1/raycluster_types.go) with the caller's
// JsonReader; errors at paths relative to the spec
// ("workerGroupSpecs[1].template.spec.containers[0].name: ..."), which the
// caller prefixes with where the spec sits. Reads the fields of
// RayClusterSpecView and, per head and worker group, its groupName,
// rayStartParams and template (a Pod template, pod_decoder.h), and per worker group its replicas, minReplicas,
// numOfHosts and suspend (leniently: lenient_fields.h). Decodes into
// the value given, which should be fresh: ray.io objects are rare next to
// Pods, and a list holds one entry per element read, so the body bounds it.
#pragma once

#include "ray_webhook/core/json/json_reader.h"
#include "ray_webhook/core/model/ray_cluster_spec.h"

namespace ray_webhook {

// read_resources: also keep the templates' containers' resources, which only the audit reads (what
// a cluster holds), and spec.suspend: a review of a RayCluster reads none, and pays nothing for them.
void DecodeClusterSpec(od::object obj, JsonReader& r, RayClusterSpecView& spec, bool read_resources = false);

}  // namespace ray_webhook
