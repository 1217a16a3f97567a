// The checks behind RayClusterSpecRules(), one per rule, by the part of the
// spec they read. Each appends a finding per field KubeRay would refuse; the
// rows (ids, releases, gates, sources) are in raycluster_spec_rules.cpp.
#pragma once

#include <vector>

#include "ray_webhook/core/spec/spec_rule.h"

namespace ray_webhook::cluster_spec {

using Check = void(const SpecContext& ctx, std::vector<SpecFinding>& out);

// The RayCluster's own metadata and upgrade strategy (raycluster_spec_metadata.cpp).
Check CheckClusterNameLength;
Check CheckClusterNameDnsLabel;
Check CheckGroupNamesUnique;
Check CheckUpgradeStrategy;

// Head and worker groups (raycluster_spec_groups.cpp).
Check CheckHeadContainers;
Check CheckWorkerGroupContainers;
Check CheckWorkerReplicasRange;
Check CheckGroupResources;
Check CheckRayStartLabels;
Check CheckGroupLabels;
Check CheckWorkerIdleTimeout;
Check CheckWorkerPriority;
Check CheckWorkerSuspendGate;
Check CheckWorkerSuspendAutoscaling;

// GCS fault tolerance (raycluster_spec_gcs.cpp).
Check CheckFtAnnotationConflict;
Check CheckRedisAddressEnv;
Check CheckRedisPassword;
Check CheckExternalStorageNamespace;
Check CheckRedisUsername;
Check CheckEmbeddedStorageGate;
Check CheckEmbeddedRedisFields;
Check CheckEmbeddedStorageClaim;
Check CheckEmbeddedStorageEnv;
Check CheckEmbeddedStorageMount;
Check CheckRedisBackendStorage;

// The autoscaler and authentication (raycluster_spec_autoscaler.cpp).
Check CheckAutoscalerV2EnvWithoutAutoscaling;
Check CheckAutoscalerVersionEnvConflict;
Check CheckAutoscalerV2RestartPolicy;
Check CheckAutoscalerIdleTimeout;
Check CheckAutoscalerStartCommandEnv;
Check CheckAuthRayVersion;
Check CheckAuthKubernetesToken;

// Options behind feature gates: history server, network policy, TLS (raycluster_spec_gated.cpp).
Check CheckHistoryServerGate;
Check CheckHistoryCollectorOptions;
Check CheckHistoryCollectorEnv;
Check CheckHistoryCollectorContainerName;
Check CheckNetworkPolicyGate;
Check CheckNetworkPolicy;
Check CheckNetworkPolicyGroupNames;
Check CheckTlsOptionsGate;
Check CheckTlsEnv;
Check CheckTlsVolumeMount;

}  // namespace ray_webhook::cluster_spec
