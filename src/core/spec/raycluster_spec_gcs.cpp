// GCS fault tolerance in a cluster spec: what gcsFaultToleranceOptions
// replaces (the ray.io/ft-enabled and external-storage-namespace annotations,
// Redis settings in the head's env and rayStartParams) and what the embedded
// RocksDB backend manages itself (ValidateRayClusterSpec and
// validateGcsFaultToleranceBackend).
#include "ray_webhook/core/json/ascii_case.h"
#include "raycluster_spec_checks.h"
#include "raycluster_spec_support.h"

namespace ray_webhook::cluster_spec {

using spec_json::Member;
using spec_json::Present;
using spec_json::String;

namespace {

constexpr std::string_view kFtEnabledAnnotation = "ray.io/ft-enabled";
constexpr std::string_view kExternalStorageNamespaceAnnotation = "ray.io/external-storage-namespace";
// utils.GCSStorageVolumeName and utils.GCSStorageMountPath.
constexpr std::string_view kGcsStorageVolume = "gcs-storage";
constexpr std::string_view kGcsStorageMountPath = "/data/gcs";

std::string OptionsPath(const SpecContext& ctx, std::string_view key) {
  return SpecPath(ctx, "gcsFaultToleranceOptions." + std::string(key));
}

Json Option(const SpecContext& ctx, std::string_view key) {
  return Member(SpecField(ctx, "gcsFaultToleranceOptions"), key);
}

// The head's first container, the one KubeRay reads env from, with its path.
struct HeadContainer {
  Json container;
  std::string path;
};
HeadContainer Head(const SpecContext& ctx) {
  const Group head = HeadGroup(ctx);
  return {RayContainer(head), RayContainerPath(head)};
}

}  // namespace

void CheckFtAnnotationConflict(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const std::optional<std::string_view> ft = ClusterAnnotation(ctx, kFtEnabledAnnotation);
  if (!ft || ft->empty() || !FaultToleranceOptionsSet(ctx)) return;
  Add(out, "gcs-ft-annotation-conflict", AnnotationPath(kFtEnabledAnnotation),
      "the ray.io/ft-enabled annotation and gcsFaultToleranceOptions are both set; gcsFaultToleranceOptions alone "
      "turns GCS fault tolerance on, so remove the annotation");
}

void CheckRedisAddressEnv(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const HeadContainer head = Head(ctx);
  const std::optional<EnvEntry> env = EnvVar(head.container, head.path, "RAY_REDIS_ADDRESS");
  if (!env) return;
  if (FaultToleranceOptionsSet(ctx)) {
    Add(out, "gcs-ft-redis-address-env", env->path,
        "the head cannot set RAY_REDIS_ADDRESS when gcsFaultToleranceOptions is set; use "
        "gcsFaultToleranceOptions.redisAddress instead");
    return;
  }
  // utils.IsGCSFaultToleranceEnabled: the annotation, in any case, or the options.
  if (AsciiLower(ClusterAnnotation(ctx, kFtEnabledAnnotation).value_or("")) == "true") return;
  Add(out, "gcs-ft-redis-address-env", env->path,
      "RAY_REDIS_ADDRESS in the head turns GCS fault tolerance on without saying so; set gcsFaultToleranceOptions "
      "(with redisAddress) instead");
}

void CheckRedisPassword(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!FaultToleranceOptionsSet(ctx)) return;
  const Group head_group = HeadGroup(ctx);
  if (StartParam(head_group, "redis-password")) {
    Add(out, "gcs-ft-redis-password", StartParamPath(head_group, "redis-password"),
        "rayStartParams cannot carry redis-password when gcsFaultToleranceOptions is set; use "
        "gcsFaultToleranceOptions.redisPassword instead");
  }
  const HeadContainer head = Head(ctx);
  if (const std::optional<EnvEntry> env = EnvVar(head.container, head.path, "REDIS_PASSWORD")) {
    Add(out, "gcs-ft-redis-password", env->path,
        "the head cannot set REDIS_PASSWORD when gcsFaultToleranceOptions is set; use "
        "gcsFaultToleranceOptions.redisPassword instead");
  }
}

void CheckExternalStorageNamespace(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const std::optional<std::string_view> ns = ClusterAnnotation(ctx, kExternalStorageNamespaceAnnotation);
  if (!ns || ns->empty() || !FaultToleranceOptionsSet(ctx)) return;
  Add(out, "gcs-ft-external-storage-namespace", AnnotationPath(kExternalStorageNamespaceAnnotation),
      "the ray.io/external-storage-namespace annotation cannot be set with gcsFaultToleranceOptions; use "
      "gcsFaultToleranceOptions.externalStorageNamespace instead");
}

void CheckRedisUsername(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const Group head_group = HeadGroup(ctx);
  if (StartParam(head_group, "redis-username")) {
    Add(out, "redis-username", StartParamPath(head_group, "redis-username"),
        "rayStartParams cannot carry redis-username; use gcsFaultToleranceOptions.redisUsername instead");
  }
  const HeadContainer head = Head(ctx);
  if (const std::optional<EnvEntry> env = EnvVar(head.container, head.path, "REDIS_USERNAME")) {
    Add(out, "redis-username", env->path,
        "the head cannot set REDIS_USERNAME; use gcsFaultToleranceOptions.redisUsername instead");
  }
}

void CheckEmbeddedStorageGate(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!EmbeddedBackend(ctx)) return;
  Add(out, "gcs-embedded-storage-gate", OptionsPath(ctx, "backend"),
      "the embedded RocksDB backend for GCS fault tolerance needs the operator's GCSFaultToleranceEmbeddedStorage "
      "feature gate");
}

void CheckEmbeddedRedisFields(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!EmbeddedBackend(ctx)) return;
  for (const std::string_view key : {"redisAddress", "redisUsername", "redisPassword", "externalStorageNamespace"}) {
    Json value = Option(ctx, key);
    // The two strings count when not empty, the two credentials when present at all.
    const bool set = value.IsString() ? !value.Empty() : Present(value);
    if (!set) continue;
    Add(out, "gcs-embedded-redis-fields", OptionsPath(ctx, key),
        "the embedded RocksDB backend keeps GCS state on a volume, so the Redis setting " + std::string(key) +
            " does not apply; remove it");
  }
}

void CheckEmbeddedStorageClaim(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!EmbeddedBackend(ctx)) return;
  Json storage = Option(ctx, "storage");
  if (!spec_json::NonEmptyString(Member(storage, "claimName"))) return;
  if (!Present(Member(storage, "size")) && !Present(Member(storage, "storageClassName")) &&
      !spec_json::NonEmptyArray(Member(storage, "accessModes"))) {
    return;
  }
  Add(out, "gcs-embedded-storage-claim", OptionsPath(ctx, "storage.claimName"),
      "an existing claim (claimName) takes no size, storageClassName or accessModes, which describe a claim "
      "KubeRay makes; use one or the other");
}

void CheckEmbeddedStorageEnv(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!EmbeddedBackend(ctx)) return;
  const HeadContainer head = Head(ctx);
  for (const std::string_view name : {"RAY_gcs_storage", "RAY_gcs_storage_path"}) {
    if (const std::optional<EnvEntry> env = EnvVar(head.container, head.path, name)) {
      Add(out, "gcs-embedded-storage-env", env->path,
          "KubeRay sets " + std::string(name) + " itself for the embedded RocksDB backend; remove it from the head");
    }
  }
}

void CheckEmbeddedStorageMount(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!EmbeddedBackend(ctx)) return;
  const HeadContainer head = Head(ctx);
  Json mounts = Member(head.container, "volumeMounts");
  if (spec_json::IsArray(mounts)) {
    for (std::size_t i = 0; i < mounts.Size(); ++i) {
      const Json mount = mounts.Nth(i);
      if (String(Member(mount, "mountPath")) != kGcsStorageMountPath &&
          String(Member(mount, "name")) != kGcsStorageVolume) {
        continue;
      }
      Add(out, "gcs-embedded-storage-mount", spec_json::Item(head.path, "volumeMounts", i),
          "KubeRay mounts the embedded RocksDB store itself (volume gcs-storage at /data/gcs); the head cannot "
          "mount that name or path");
    }
  }
  const Group head_group = HeadGroup(ctx);
  Json volumes = spec_json::At(head_group.spec, "template.spec.volumes");
  if (const std::optional<std::size_t> i = IndexWhere(volumes, "name", kGcsStorageVolume)) {
    Add(out, "gcs-embedded-storage-mount", spec_json::Item(head_group.path + ".template.spec", "volumes", *i),
        "KubeRay adds the embedded RocksDB store's volume gcs-storage itself; the head pod cannot have a volume of "
        "that name");
  }
}

void CheckRedisBackendStorage(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!FaultToleranceOptionsSet(ctx) || EmbeddedBackend(ctx) || !Present(Option(ctx, "storage"))) return;
  Add(out, "gcs-ft-storage-redis", OptionsPath(ctx, "storage"),
      "storage is for the embedded RocksDB backend only; with the Redis backend remove it, or set backend: rocksdb");
}

}  // namespace ray_webhook::cluster_spec
