// What the RayCluster spec rules share: where the head and worker groups sit
// in the cluster spec and under which field path, how KubeRay decides that
// autoscaling, autoscaler v2 and GCS fault tolerance are on, and the name and
// version syntax KubeRay checks with k8s.io/apimachinery.
//
// Contract: pure and null-safe like spec_json.h; every reader returns null,
// nullopt or false for what is absent or of another type. Paths are built as
// kubectl prints them ("spec.workerGroupSpecs[1].template.spec.containers[0]",
// "spec.headGroupSpec.rayStartParams[redis-password]").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ray_webhook/core/spec/spec_rule.h"
#include "spec_json.h"

namespace ray_webhook::cluster_spec {

using spec_json::Json;

// Whether KubeRay validates the cluster spec the object carries: a RayCluster
// from the first release with validation.go, a RayJob or RayService from
// v1.4.0, where ValidateRayJobSpec and ValidateRayServiceSpec call
// ValidateRayClusterSpec (ray-operator/controllers/ray/utils/validation.go:174@v1.4.0).
bool ValidatedByKubeRay(const SpecContext& ctx);
// A check that runs only where ValidatedByKubeRay holds, for a table row.
template <void (*Check)(const SpecContext&, std::vector<SpecFinding>&)>
void WhereValidated(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (ValidatedByKubeRay(ctx)) Check(ctx, out);
}

// The annotation KubeRay reads beside the cluster spec: the object's own,
// except a RayCronJob, whose RayJob template KubeRay validates without any
// (ValidateRayCronJobSpec builds a RayJob from spec.jobTemplate alone).
std::optional<std::string_view> ClusterAnnotation(const SpecContext& ctx, std::string_view key);
std::string AnnotationPath(std::string_view key);

void Add(std::vector<SpecFinding>& out, std::string_view rule, std::string path, std::string message);

// ValidateRayJobMetadata, ValidateRayServiceMetadata: KubeRay names a RayCluster after the
// object with 6 characters added, so its metadata.name has at most 53 - 6 characters and is
// a DNS-1035 label; `why` ends "so that ...". An absent name (generateName) is not checked.
void CheckNameOfClusterOwner(const SpecContext& ctx, std::string_view rule, std::string_view kind, std::string_view why,
                             std::vector<SpecFinding>& out);

// The cluster spec's fields and their paths.
Json SpecField(const SpecContext& ctx, std::string_view dotted_keys);
std::string SpecPath(const SpecContext& ctx, std::string_view dotted_keys);

// One group: the head (index nullopt) or workerGroupSpecs[index].
struct Group {
  Json spec;
  std::string path;  // "spec.headGroupSpec", "spec.workerGroupSpecs[1]"
  std::optional<std::size_t> index;
  std::string Name() const;  // "the head group", "worker group \"small\""
};
Group HeadGroup(const SpecContext& ctx);
std::vector<Group> WorkerGroups(const SpecContext& ctx);
std::vector<Group> AllGroups(const SpecContext& ctx);  // the head first

// template.spec.containers of a group, and its first one (KubeRay's Ray container).
Json Containers(const Group& group);
Json RayContainer(const Group& group);
std::string ContainersPath(const Group& group);
std::string RayContainerPath(const Group& group);

// The index of the first entry of a list (env, volumeMounts, volumes)
// whose `key` is `value`.
std::optional<std::size_t> IndexWhere(Json list, std::string_view key, std::string_view value);
// The first env entry of `container` named `name`, with its path.
struct EnvEntry {
  Json entry;
  std::string path;
};
std::optional<EnvEntry> EnvVar(Json container, std::string_view container_path, std::string_view name);

// rayStartParams[key] of a group: a value that is present and not empty, as Go
// reads a missing key of a map[string]string as "".
std::optional<std::string_view> StartParam(const Group& group, std::string_view key);
std::string StartParamPath(const Group& group, std::string_view key);

// utils.IsAutoscalingEnabled: enableInTreeAutoscaling is true.
bool AutoscalingEnabled(const SpecContext& ctx);
// utils.IsAutoscalingV2Enabled: autoscalerOptions.version is "v2".
bool AutoscalerVersionV2(const SpecContext& ctx);
// The head's RAY_enable_autoscaler_v2 is "1" or "true" (the older way to ask for v2).
bool HeadEnvAsksAutoscalerV2(const SpecContext& ctx);
// spec.gcsFaultToleranceOptions is set.
bool FaultToleranceOptionsSet(const SpecContext& ctx);
// gcsFaultToleranceOptions.backend is "rocksdb" (utils.GetGcsFaultToleranceBackend).
bool EmbeddedBackend(const SpecContext& ctx);

// k8s.io/apimachinery/pkg/util/validation.
bool IsDns1035Label(std::string_view name);
bool IsDns1123Label(std::string_view name);
bool IsQualifiedName(std::string_view name);
bool IsLabelValue(std::string_view value);

// k8s.io/apimachinery/pkg/util/version.ParseGeneric: "v"?N.N(.N)* and any
// suffix; nullopt where Go returns an error. LessThan compares the numbers
// with missing ones as 0.
std::optional<std::vector<std::uint64_t>> ParseGenericVersion(std::string_view text);
bool VersionLess(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b);

}  // namespace ray_webhook::cluster_spec
