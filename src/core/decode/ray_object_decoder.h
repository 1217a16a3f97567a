// The object decoders of the ray.io kinds: RayCluster, RayJob, RayService, RayCronJob.
//
// Contract: each reads one bare object of its kind with the caller's
// JsonReader into a fresh RayObject (out is reset first); errors at paths
// relative to the object ("spec.rayClusterSpec.headGroupSpec...: ..."),
// which the caller prefixes with where the object sits. Each keeps the
// metadata and the RayClusterSpec where its kind carries it
// (ClusterSpecPath): spec itself for a RayCluster, spec.rayClusterSpec for a
// RayJob (and whether spec.clusterSelector is set), spec.rayClusterConfig for
// a RayService, spec.jobTemplate.rayClusterSpec for a RayCronJob. A RayJob
// also keeps RayJobState (spec.shutdownAfterJobFinishes,
// ttlSecondsAfterFinished, suspend, status.jobDeploymentStatus, endTime,
// rayClusterName, startTime), a RayService RayServiceState (its two status
// rayClusterNames, spec.suspend) and, for the audit only, a RayCluster
// RayClusterState (its RayClusterSuspended condition), read leniently: a
// value of the wrong type reads as absent. Field names are those of v1 and
// v1alpha1 alike.
#pragma once

#include "ray_webhook/core/json/json_reader.h"
#include "ray_webhook/core/model/ray_cluster_spec.h"

namespace ray_webhook {

void DecodeRayCluster(od::object obj, JsonReader& r, RayObject& out, bool read_resources = false);
void DecodeRayJob(od::object obj, JsonReader& r, RayObject& out, bool read_resources = false);
void DecodeRayService(od::object obj, JsonReader& r, RayObject& out, bool read_resources = false);
void DecodeRayCronJob(od::object obj, JsonReader& r, RayObject& out, bool read_resources = false);

// The decoder of `kind`. read_resources: as for DecodeClusterSpec, and a RayCluster's status (its
// RayClusterSuspended condition); only the audit's ObjectDecoder sets it.
void DecodeRayObject(od::object obj, JsonReader& r, RayObjectKind kind, RayObject& out, bool read_resources = false);

}  // namespace ray_webhook
