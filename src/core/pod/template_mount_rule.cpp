#include "ray_webhook/core/pod/template_mount_rule.h"

#include <algorithm>
#include <string>

#include "kuberay_mounts.h"
#include "ray_webhook/core/model/admission_text.h"
#include "ray_webhook/core/pod/duplicate_mount_rule.h"

namespace ray_webhook {
namespace {

namespace kr = kuberay;

constexpr std::string_view kSharedMemCause =
    "KubeRay adds its /dev/shm volume \"shared-mem\" to the Ray container unless the container already mounts "
    "exactly \"/dev/shm\" (or rayStartParams sets plasma-directory): write the path as \"/dev/shm\"";
constexpr std::string_view kRayLogsCause =
    "with enableInTreeAutoscaling KubeRay mounts its log volume \"ray-logs\" at /tmp/ray in the Ray container and "
    "the autoscaler sidecar unless the container already mounts exactly \"/tmp/ray\": write the path as \"/tmp/ray\"";
constexpr std::string_view kRayTlsCause =
    "with mTLS (spec.tlsOptions, KubeRay 1.7) KubeRay mounts volume \"ray-tls\" at /etc/ray/tls unless a mount of "
    "that name or of exactly \"/etc/ray/tls\" exists: write the path as \"/etc/ray/tls\", or mount it elsewhere";
constexpr std::string_view kSidecarCause =
    "KubeRay gives the autoscaler sidecar its own \"ray-token\" (token authentication) and \"ray-tls\" (mTLS) "
    "mounts before it appends autoscalerOptions.volumeMounts: mount yours elsewhere";
constexpr std::string_view kTemplateCause = "the template itself mounts this path more than once";

constexpr std::size_t kAddedByKubeRay = static_cast<std::size_t>(-1);
// Volumes named per finding; the count says the rest.
constexpr std::size_t kMaxVolumesNamed = 5;

// One mount of a container of the Pod KubeRay would build. Field paths are
// spelled out only for findings.
struct Mount {
  std::string clean;  // CleanMountPath
  std::string_view volume;
  std::size_t index;       // in the object's list of the container's mounts, or kAddedByKubeRay
  std::string_view cause;  // why KubeRay adds it, when it does
};

struct ModelContainer {
  std::string_view name;
  std::string_view kind;    // "container", "init container"
  std::string mounts_path;  // where the object lists its mounts
  std::vector<Mount> mounts;
};

bool HasExactPath(const std::vector<VolumeMount>& mounts, std::string_view path) {
  return std::any_of(mounts.begin(), mounts.end(), [&](const VolumeMount& m) { return m.mount_path == path; });
}
bool HasVolume(const std::vector<VolumeMount>& mounts, std::string_view volume) {
  return std::any_of(mounts.begin(), mounts.end(), [&](const VolumeMount& m) { return m.name == volume; });
}

void AddWritten(const std::vector<VolumeMount>& mounts, std::vector<Mount>& out) {
  for (std::size_t i = 0; i < mounts.size(); ++i)
    out.push_back({CleanMountPath(mounts[i].mount_path), mounts[i].name, i, {}});
}

void AddByOperator(std::string_view volume, std::string_view path, std::string_view cause, std::vector<Mount>& out) {
  out.push_back({CleanMountPath(path), volume, kAddedByKubeRay, cause});
}

// The Pod's containers as KubeRay builds them from one group's template.
std::vector<ModelContainer> ModelPod(const RayClusterSpecView& spec, const TemplateGroup& group,
                                     std::string_view spec_path) {
  std::vector<ModelContainer> pod;
  const Pod& t = group.spec->template_pod;
  const auto ray_index = RayContainerIndex(t);
  const bool head = group.node_type == RayNodeType::kHead;
  const bool autoscaler = head && spec.enable_in_tree_autoscaling;
  // A container of the template, with the mounts it is written with.
  auto written = [&](const Container& c, std::string_view kind, std::string_view list,
                     std::size_t i) -> ModelContainer& {
    ModelContainer& m = pod.emplace_back();
    m.name = c.name;
    m.kind = kind;
    m.mounts_path = group.path + ".template.spec." + std::string(list) + "[" + std::to_string(i) + "].volumeMounts";
    AddWritten(c.volume_mounts, m.mounts);
    return m;
  };
  for (std::size_t i = 0; i < t.containers.size(); ++i) {
    const Container& c = t.containers[i];
    ModelContainer& m = written(c, "container", "containers", i);
    if (ray_index != i) continue;
    // In the order pod.go adds them: configureTokenAuth, configureTLS (v1.7), then BuildPod's addEmptyDir.
    if (spec.K8sTokenAuth() && !HasVolume(c.volume_mounts, kr::kRayTokenVolume)) {
      AddByOperator(kr::kRayTokenVolume, kr::kRayTokenPath, KubeRayMountCause(kr::kRayTokenVolume), m.mounts);
    }
    if (spec.tls_enabled && !HasVolume(c.volume_mounts, kr::kRayTlsVolume) &&
        !HasExactPath(c.volume_mounts, kr::kRayTlsPath)) {
      AddByOperator(kr::kRayTlsVolume, kr::kRayTlsPath, kRayTlsCause, m.mounts);
    }
    if (!Lookup(group.spec->ray_start_params, kr::kPlasmaDirectoryParam) &&
        !HasExactPath(c.volume_mounts, kr::kSharedMemPath)) {
      AddByOperator(kr::kSharedMemVolume, kr::kSharedMemPath, kSharedMemCause, m.mounts);
    }
    if (autoscaler && !HasExactPath(c.volume_mounts, kr::kRayLogsPath)) {
      AddByOperator(kr::kRayLogsVolume, kr::kRayLogsPath, kRayLogsCause, m.mounts);
    }
  }
  for (std::size_t i = 0; i < t.init_containers.size(); ++i)
    written(t.init_containers[i], "init container", "initContainers", i);
  if (autoscaler) {
    // DefaultHeadPodTemplate: BuildAutoscalerContainer (no mounts), token auth
    // and mTLS, mergeAutoscalerOverrides; then BuildPod's addEmptyDir for ray-logs.
    ModelContainer& m = pod.emplace_back();
    m.name = kr::kAutoscalerContainer;
    m.kind = "container";
    m.mounts_path = std::string(spec_path) + ".autoscalerOptions.volumeMounts";
    if (spec.K8sTokenAuth()) AddByOperator(kr::kRayTokenVolume, kr::kRayTokenPath, kSidecarCause, m.mounts);
    if (spec.tls_enabled) AddByOperator(kr::kRayTlsVolume, kr::kRayTlsPath, kSidecarCause, m.mounts);
    AddWritten(spec.autoscaler_volume_mounts, m.mounts);
    if (!HasExactPath(spec.autoscaler_volume_mounts, kr::kRayLogsPath)) {
      AddByOperator(kr::kRayLogsVolume, kr::kRayLogsPath, kRayLogsCause, m.mounts);
    }
  }
  return pod;
}

// Sorting keeps this O(n log n) however many mounts a hostile object lists.
void FindDuplicates(const TemplateGroup& group, const ModelContainer& c, std::vector<TemplateFinding>& out) {
  if (c.mounts.size() < 2 || out.size() >= kMaxTemplateMountFindings) return;
  std::vector<std::size_t> order(c.mounts.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return c.mounts[a].clean < c.mounts[b].clean; });
  for (auto it = order.begin(); it != order.end();) {
    const std::string& path = c.mounts[*it].clean;
    const auto run_end = std::find_if(it, order.end(), [&](std::size_t k) { return c.mounts[k].clean != path; });
    const auto count = static_cast<std::size_t>(run_end - it);
    if (count > 1 && out.size() < kMaxTemplateMountFindings) {
      std::size_t written = 0;  // the last mount the object writes: the one that collides
      std::string_view cause;
      std::string volumes;
      for (auto m = it; m != run_end; ++m) {
        const Mount& mount = c.mounts[*m];
        if (mount.index != kAddedByKubeRay) written = mount.index;
        if (cause.empty()) cause = mount.cause;
        const auto named = static_cast<std::size_t>(m - it);
        if (named > kMaxVolumesNamed) continue;
        volumes += named == 0 ? "" : ", ";
        if (named == kMaxVolumesNamed) {
          volumes += "and " + std::to_string(count - named) + " more";
          continue;
        }
        volumes += Quote(mount.volume, 63);
        if (mount.index == kAddedByKubeRay) volumes += " added by KubeRay";
      }
      TemplateFinding f;
      f.field_path = c.mounts_path + "[" + std::to_string(written) + "]";
      f.summary = c.kind;
      f.summary += ' ';
      f.summary += Quote(c.name, 63);
      f.summary += " would mount " + Quote(path) + " " + std::to_string(count) + " times (volumes " + volumes + ")";
      f.detail = "group " + Quote(group.name, 63) + " (" + f.field_path + "): " + f.summary + ": " +
                 std::string(cause.empty() ? kTemplateCause : cause);
      out.push_back(std::move(f));
    }
    it = run_end;
  }
}

}  // namespace

std::vector<TemplateFinding> CheckTemplateMounts(const RayObject& object) {
  std::vector<TemplateFinding> findings;
  if (!object.cluster) return findings;
  for (const TemplateGroup& group : TemplateGroups(object)) {
    for (const ModelContainer& c : ModelPod(*object.cluster, group, ClusterSpecPath(object.kind))) {
      FindDuplicates(group, c, findings);
    }
  }
  return findings;
}

}  // namespace ray_webhook
