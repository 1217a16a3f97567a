// The volume mounts KubeRay adds to the Pods it builds, by volume name and
// mount path (ray-operator/controllers/ray/common/pod.go and utils/constant.go).
#pragma once

#include <string_view>

namespace ray_webhook::kuberay {

// pod.go SharedMemoryVolumeName, SharedMemoryVolumeMountPath: the object store's /dev/shm.
inline constexpr std::string_view kSharedMemVolume = "shared-mem";
inline constexpr std::string_view kSharedMemPath = "/dev/shm";
// pod.go RayLogVolumeName, RayLogVolumeMountPath: shared by the Ray container and the autoscaler sidecar.
inline constexpr std::string_view kRayLogsVolume = "ray-logs";
inline constexpr std::string_view kRayLogsPath = "/tmp/ray";
// utils/constant.go RayTokenVolumeName, RayTokenMountPath: Kubernetes token authentication (v1.6).
inline constexpr std::string_view kRayTokenVolume = "ray-token";
inline constexpr std::string_view kRayTokenPath = "/var/run/secrets/ray.io/serviceaccount";
// utils RayTLSVolumeName, RayTLSCertMountPath: mTLS (v1.7, spec.tlsOptions).
inline constexpr std::string_view kRayTlsVolume = "ray-tls";
inline constexpr std::string_view kRayTlsPath = "/etc/ray/tls";
// utils/constant.go GCSStorageVolumeName, GCSStorageMountPath: the embedded GCS fault tolerance store, head only
// (pod.go configureEmbeddedFT, v1.7).
inline constexpr std::string_view kGcsStorageVolume = "gcs-storage";
inline constexpr std::string_view kGcsStoragePath = "/data/gcs";
// pod.go PlasmaDirectoryParamKey: with it in rayStartParams, no /dev/shm mount is added (v1.6.0).
inline constexpr std::string_view kPlasmaDirectoryParam = "plasma-directory";
// pod.go AutoscalerContainerName.
inline constexpr std::string_view kAutoscalerContainer = "autoscaler";
// utils/constant.go CollectorContainerName: the history server's collector sidecar (v1.7).
inline constexpr std::string_view kHistoryCollectorContainer = "ray-history-collector";

}  // namespace ray_webhook::kuberay
