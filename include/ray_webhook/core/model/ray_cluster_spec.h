// The core's view of a ray.io RayCluster, RayJob or RayService: only the
// fields of the RayCluster spec that decide what KubeRay adds to the Pods it
// builds from each group's template.
//
// Contract: plain data, like the rest of AdmissionRequest. Every string_view
// points into the buffer of the ReviewDecoder that produced it. A group's
// template is kept as a Pod (its metadata, containers and initContainers),
// so the Pod rules' helpers read it as they read a Pod. Field names follow
// ray-operator/apis/ray/v1/raycluster_types.go (KubeRay v1.6.2); v1alpha1 has
// the same names for every field read here, and no authOptions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ray_webhook/core/model/pod_view.h"

namespace ray_webhook {

enum class RayObjectKind { kRayCluster, kRayJob, kRayService, kRayCronJob };

// "RayCluster", "RayJob", "RayService", "RayCronJob".
std::string_view RayObjectKindName(RayObjectKind kind);

// The ray.io kind a request names (group ray.io, version v1 or v1alpha1), or nullopt.
std::optional<RayObjectKind> RayObjectKindOf(const GroupVersionKind& kind);

// Where the RayCluster spec sits in the object, as a field path: "spec" for a
// RayCluster, "spec.rayClusterSpec" for a RayJob, "spec.rayClusterConfig" for
// a RayService, "spec.jobTemplate.rayClusterSpec" for a RayCronJob.
std::string_view ClusterSpecPath(RayObjectKind kind);

// A head or worker group: HeadGroupSpec or WorkerGroupSpec.
struct RayGroupSpec {
  std::string_view group_name;  // workerGroupSpecs[].groupName; empty for the head group
  StringMap ray_start_params;
  Pod template_pod;  // .template: its metadata, containers and initContainers
  // Worker groups only: replicas, minReplicas, numOfHosts and suspend, read leniently (a value of
  // the wrong type reads as absent); absent replicas and minReplicas are 0, numOfHosts 1, as
  // KubeRay's CRD defaults them.
  std::optional<std::int64_t> replicas, min_replicas;
  std::int64_t num_of_hosts = 1;
  bool suspend = false;
};

struct RayClusterSpecView {
  bool enable_in_tree_autoscaling = false;
  // spec.autoscalerOptions.volumeMounts: appended to the autoscaler sidecar.
  std::vector<VolumeMount> autoscaler_volume_mounts;
  // spec.authOptions (v1.6+): token authentication when mode is "token", with
  // Kubernetes tokens when enableK8sTokenAuth is also true.
  std::string_view auth_mode;
  bool enable_k8s_token_auth = false;
  // spec.tlsOptions.enabled (v1.7, feature gate RayClusterMTLS).
  bool tls_enabled = false;
  // spec.suspend, read leniently and only by the audit's decoder (read_resources), for the
  // suspended-loop rule: for a RayService, spec.rayClusterConfig.suspend.
  bool suspend = false;
  bool has_head_group = false;
  RayGroupSpec head_group;
  std::vector<RayGroupSpec> worker_groups;

  bool K8sTokenAuth() const { return auth_mode == "token" && enable_k8s_token_auth; }
};

// What a RayJob says of its run (KubeRay v1.6.2, rayjob_types.go): read leniently, for the audit
// of existing objects, so a value of the wrong type reads as absent and is no admission error.
struct RayJobState {
  std::string_view deployment_status;           // status.jobDeploymentStatus: "Running", "Complete", "Failed", ...
  std::string_view end_time;                    // status.endTime, RFC 3339 as written
  std::string_view cluster_name;                // status.rayClusterName
  bool shutdown_after_job_finishes = false;     // spec.shutdownAfterJobFinishes
  std::int64_t ttl_seconds_after_finished = 0;  // spec.ttlSecondsAfterFinished
  bool suspend = false;                         // spec.suspend
  std::string_view start_time;                  // status.startTime, RFC 3339 as written
};

// A RayService's two clusters (rayservice_types.go), read leniently as RayJobState is.
struct RayServiceState {
  std::string_view active_cluster;   // status.activeServiceStatus.rayClusterName
  std::string_view pending_cluster;  // status.pendingServiceStatus.rayClusterName
  bool suspend = false;              // spec.suspend (KubeRay v1.7.0)
};

// What a RayCluster's status says of its suspension (raycluster_types.go), read leniently as
// RayJobState is, and only by the audit's decoder (read_resources).
struct RayClusterState {
  // status.conditions[type RayClusterSuspended].lastTransitionTime, when that condition's status is "True".
  std::string_view suspended_since;
};

struct RayObject {
  RayObjectKind kind = RayObjectKind::kRayCluster;
  ObjectMeta metadata;
  // Absent when the object has no RayCluster spec: a RayJob without
  // spec.rayClusterSpec, which runs on an existing cluster.
  std::optional<RayClusterSpecView> cluster;
  // RayJob spec.clusterSelector is set: KubeRay creates no cluster for it.
  bool uses_cluster_selector = false;
  RayJobState job;                // a RayJob's; empty for the other kinds
  RayServiceState service;        // a RayService's; empty for the other kinds
  RayClusterState cluster_state;  // a RayCluster's; empty for the other kinds
  // The object's own JSON text, from '{' to its '}', for KubeRay's spec
  // checks, which read fields no view here keeps. Set by the decoders once
  // the object has read; empty when no decoder set it (an object built in code).
  std::string_view raw_json;
};

}  // namespace ray_webhook
