// The head and worker groups of a cluster spec: containers, replica bounds,
// Ray resources and labels, and the worker fields only the autoscaler reads
// (ValidateRayClusterSpec, validateRayGroupResources, validateRayGroupLabels,
// validateWorkerGroupIdleTimeout, validateWorkerGroupPriority).
#include <algorithm>
#include <utility>

#include "raycluster_spec_checks.h"
#include "raycluster_spec_support.h"

namespace ray_webhook::cluster_spec {

using spec_json::Integer;
using spec_json::Member;
using spec_json::String;

namespace {

// KubeRay reads a pod template without containers as none at all.
void RequireContainers(const Group& group, std::string_view rule, std::vector<SpecFinding>& out) {
  Json containers = Containers(group);
  if (spec_json::Present(containers) && (!containers.IsArray() || !containers.Empty())) return;
  Add(out, rule, ContainersPath(group),
      group.Name() + " needs at least one container in its pod template: the first one runs Ray");
}

// The worker group may use autoscaler v2 only: autoscalerOptions.version v2,
// or the head's RAY_enable_autoscaler_v2 (the way before KubeRay v1.4.0).
bool AutoscalerV2(const SpecContext& ctx) { return AutoscalerVersionV2(ctx) || HeadEnvAsksAutoscalerV2(ctx); }

}  // namespace

void CheckHeadContainers(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  RequireContainers(HeadGroup(ctx), "head-containers", out);
}

void CheckWorkerGroupContainers(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  for (const Group& group : WorkerGroups(ctx)) RequireContainers(group, "worker-group-containers", out);
}

void CheckWorkerReplicasRange(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  for (const Group& group : WorkerGroups(ctx)) {
    const std::optional<std::int64_t> min = Integer(Member(group.spec, "minReplicas"));
    const std::optional<std::int64_t> max = Integer(Member(group.spec, "maxReplicas"));
    if (min && *min < 0) {
      Add(out, "worker-replicas-range", group.path + ".minReplicas",
          group.Name() + " has a negative minReplicas (" + std::to_string(*min) + ")");
    }
    if (max && *max < 0) {
      Add(out, "worker-replicas-range", group.path + ".maxReplicas",
          group.Name() + " has a negative maxReplicas (" + std::to_string(*max) + ")");
    }
    if (min && max && *min > *max) {
      Add(out, "worker-replicas-range", group.path + ".minReplicas",
          group.Name() + " has minReplicas " + std::to_string(*min) + " above its maxReplicas " + std::to_string(*max));
    }
  }
}

void CheckGroupResources(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  for (const Group& group : AllGroups(ctx)) {
    if (!spec_json::NonEmptyObject(Member(group.spec, "resources"))) continue;
    for (const std::string_view param : {"num-cpus", "num-gpus", "memory", "resources"}) {
      if (!StartParam(group, param)) continue;
      Add(out, "group-resources", group.path + ".resources",
          group.Name() + " sets Ray resources both here and in rayStartParams (" + std::string(param) +
              "); use only one of them");
      break;
    }
  }
}

void CheckRayStartLabels(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  for (const Group& group : AllGroups(ctx)) {
    // Any value, even "", counts: KubeRay asks whether the key is there.
    if (!Member(Member(group.spec, "rayStartParams"), "labels")) continue;
    Add(out, "ray-start-labels", StartParamPath(group, "labels"),
        group.Name() + " cannot pass Ray node labels in rayStartParams; use the group's labels field instead");
  }
}

void CheckGroupLabels(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  for (const Group& group : AllGroups(ctx)) {
    Json labels = Member(group.spec, "labels");
    if (!labels.IsObject()) continue;
    // In key order, as the findings have always come (and as Go's validation
    // reads the map, whatever order the object's text has).
    std::vector<std::pair<std::string_view, Json>> sorted;
    for (const simdjson::dom::key_value_pair member : labels.Members()) sorted.emplace_back(member.key, member.value);
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [key, value] : sorted) {
      const std::optional<std::string_view> text = String(value);
      if (!text) continue;
      const std::string path = group.path + ".labels[" + std::string(key) + "]";
      if (!IsQualifiedName(key)) {
        Add(out, "group-labels", path,
            group.Name() +
                " has a Ray node label key that is not a Kubernetes qualified name ([prefix/]name, "
                "the name at most 63 alphanumerics, '-', '_' or '.')");
      }
      if (!IsLabelValue(*text)) {
        Add(out, "group-labels", path,
            group.Name() +
                " has a Ray node label value that is not a Kubernetes label value (at most 63 "
                "alphanumerics, '-', '_' or '.', starting and ending alphanumeric)");
      }
    }
  }
}

void CheckWorkerIdleTimeout(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  for (const Group& group : WorkerGroups(ctx)) {
    const std::optional<std::int64_t> seconds = Integer(Member(group.spec, "idleTimeoutSeconds"));
    if (!seconds) continue;
    const std::string path = group.path + ".idleTimeoutSeconds";
    if (*seconds < 0) {
      Add(out, "worker-idle-timeout", path, group.Name() + " has a negative idleTimeoutSeconds");
    } else if (!AutoscalerV2(ctx)) {
      Add(out, "worker-idle-timeout", path,
          "only autoscaler v2 reads a worker group's idleTimeoutSeconds; set autoscalerOptions.version to v2 "
          "or remove it from " +
              group.Name());
    }
  }
}

void CheckWorkerPriority(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  static const std::vector<std::uint64_t> kFirstRayWithPriority = {2, 56, 0};
  for (const Group& group : WorkerGroups(ctx)) {
    const std::optional<std::int64_t> priority = Integer(Member(group.spec, "priority"));
    if (!priority || *priority == 0) continue;
    const std::string path = group.path + ".priority";
    const std::string_view ray_version = String(SpecField(ctx, "rayVersion")).value_or("");
    const auto parsed = ParseGenericVersion(ray_version);
    if (ray_version.empty()) {
      Add(out, "worker-priority", path, "a worker group priority needs Ray 2.56.0 or later; set rayVersion");
    } else if (!parsed) {
      Add(out, "worker-priority", path,
          "a worker group priority needs Ray 2.56.0 or later, and rayVersion \"" + std::string(ray_version) +
              "\" is not a version");
    } else if (VersionLess(*parsed, kFirstRayWithPriority)) {
      Add(out, "worker-priority", path,
          "a worker group priority needs Ray 2.56.0 or later, and rayVersion is " + std::string(ray_version));
    }
    if (!AutoscalerV2(ctx)) {
      Add(out, "worker-priority", path,
          "only autoscaler v2 reads a worker group priority; set autoscalerOptions.version to v2 or remove it from " +
              group.Name());
    }
  }
}

void CheckWorkerSuspendGate(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  for (const Group& group : WorkerGroups(ctx)) {
    if (spec_json::Boolean(Member(group.spec, "suspend")) != true) continue;
    Add(out, "worker-suspend-gate", group.path + ".suspend",
        "a worker group can be suspended only when the operator runs with the RayJobDeletionPolicy feature gate");
  }
}

void CheckWorkerSuspendAutoscaling(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!AutoscalingEnabled(ctx)) return;
  for (const Group& group : WorkerGroups(ctx)) {
    if (spec_json::Boolean(Member(group.spec, "suspend")) != true) continue;
    Add(out, "worker-suspend-autoscaling", group.path + ".suspend",
        "a worker group cannot be suspended while the Ray autoscaler is on (enableInTreeAutoscaling)");
  }
}

}  // namespace ray_webhook::cluster_spec
