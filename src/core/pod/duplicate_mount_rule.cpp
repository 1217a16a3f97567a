#include "ray_webhook/core/pod/duplicate_mount_rule.h"

#include <algorithm>

#include "kuberay_mounts.h"
#include "ray_webhook/core/model/admission_text.h"

namespace ray_webhook {
namespace {

// More findings than this make an unreadable message; the count says the rest.
constexpr std::size_t kMaxReported = 5;

struct Finding {
  std::string_view kind;  // "container", "init container", "ephemeral container"
  std::string_view container;
  std::string path;
  std::size_t count;
  std::vector<std::string_view> volumes;
};

// Sorting keeps this O(n log n) however many mounts a hostile body lists.
void FindIn(const std::vector<Container>& list, std::string_view kind, std::vector<Finding>& out) {
  std::vector<std::pair<std::string, std::size_t>> cleaned;  // (path, mount index)
  for (const Container& c : list) {
    if (c.volume_mounts.size() < 2) continue;
    cleaned.clear();
    cleaned.reserve(c.volume_mounts.size());
    for (std::size_t i = 0; i < c.volume_mounts.size(); ++i) {
      cleaned.emplace_back(CleanMountPath(c.volume_mounts[i].mount_path), i);
    }
    std::sort(cleaned.begin(), cleaned.end());
    for (auto it = cleaned.begin(); it != cleaned.end();) {
      const auto run_end = std::find_if(it, cleaned.end(), [&](const auto& p) { return p.first != it->first; });
      if (run_end - it > 1) {
        Finding f{kind, c.name, it->first, static_cast<std::size_t>(run_end - it), {}};
        for (auto m = it; m != run_end; ++m) f.volumes.push_back(c.volume_mounts[m->second].name);
        out.push_back(std::move(f));
      }
      it = run_end;
    }
  }
}

// The mounts KubeRay adds itself, each where a duplicate of its path most
// likely comes from. Paths as CleanMountPath leaves them. The first entry that
// matches a duplicate names its cause, so narrower entries come first.
struct KnownMount {
  std::string_view volume;
  std::string_view path;
  std::string_view cause;
  std::string_view container = {};  // when set, only for a duplicate in the container of this name
  bool head_only = false;           // only for a duplicate in a head Pod
};

constexpr KnownMount kKnownMounts[] = {
    // ray-operator/controllers/ray/common/pod.go: SharedMemoryVolumeName at SharedMemoryVolumeMountPath.
    {kuberay::kSharedMemVolume, kuberay::kSharedMemPath,
     "its Pod template was most likely changed in place by a shallow copy in the operator, which "
     "appended KubeRay's /dev/shm mount (volume \"shared-mem\") to it once per Pod (KubeRay #688, fixed by "
     "deep copies in KubeRay 0.5.0, PR #714). Upgrade the operator, or recreate the RayCluster so that its "
     "Pods are built from an unmodified template"},
    // pod.go AddRayTokenVolume (v1.6): the mount is skipped only when one is NAMED ray-token.
    {kuberay::kRayTokenVolume, kuberay::kRayTokenPath,
     "with Kubernetes token authentication (spec.authOptions) KubeRay mounts volume \"ray-token\" at "
     "/var/run/secrets/ray.io/serviceaccount unless a mount named ray-token already exists: name your mount "
     "ray-token, or mount it elsewhere"},
    // pod.go:178@v1.7.0 configureEmbeddedFT: on the head only, appended whatever the container mounts already; the
    // spec validation (utils/validation.go:360@v1.7.0) refuses a head mount at exactly "/data/gcs" or named
    // gcs-storage, so what reaches a Pod is a path written otherwise ("/data/gcs/") or another container's template.
    {kuberay::kGcsStorageVolume,
     kuberay::kGcsStoragePath,
     "KubeRay 1.7 mounts its embedded GCS storage (gcs-storage) at /data/gcs on the head when "
     "spec.gcsFaultToleranceOptions.backend is rocksdb (feature gate GCSFaultToleranceEmbeddedStorage), "
     "whatever the container mounts there already: remove your mount at /data/gcs (KubeRay's volume holds the "
     "GCS store; spec.gcsFaultToleranceOptions.storage chooses its claim), or mount your volume elsewhere",
     {},
     true},
    // pod.go:872-874@v1.7.0: with the RayClusterHistoryServer gate, addEmptyDir mounts ray-logs at /tmp/ray on the
    // collector sidecar (BuildCollectorContainer) unless it mounts exactly "/tmp/ray" already.
    {kuberay::kRayLogsVolume, kuberay::kRayLogsPath,
     "with the history server (spec.historyServerOptions.collectorOptions, feature gate RayClusterHistoryServer, "
     "KubeRay 1.7) KubeRay mounts its log volume \"ray-logs\" at /tmp/ray on the collector sidecar "
     "\"ray-history-collector\", which reads the Ray logs from it, unless the sidecar already mounts exactly "
     "\"/tmp/ray\": remove your mount at /tmp/ray from the sidecar, or write the path as \"/tmp/ray\"",
     kuberay::kHistoryCollectorContainer},
    // pod.go RayLogVolumeName at RayLogVolumeMountPath, for the autoscaler sidecar and the history-server collector.
    // addEmptyDir (v1.6.2 and v1.7.0) skips the mount when checkIfVolumeMounted finds one at exactly that path, as
    // written, whatever its volume's name: a path written otherwise ("/tmp/ray/") gets KubeRay's mount as well.
    {kuberay::kRayLogsVolume, kuberay::kRayLogsPath,
     "KubeRay mounts its log volume \"ray-logs\" at /tmp/ray for the autoscaler sidecar or the history-server "
     "collector (KubeRay 1.7) unless the container already mounts exactly \"/tmp/ray\" (the path as written, "
     "whatever the volume's name): write the path as \"/tmp/ray\", or mount it elsewhere"},
    // mTLS (KubeRay 1.7 spec.tlsOptions): the certificates at /etc/ray/tls.
    {kuberay::kRayTlsVolume, kuberay::kRayTlsPath,
     "with mTLS (spec.tlsOptions, KubeRay 1.7) KubeRay mounts volume \"ray-tls\" at /etc/ray/tls: mount "
     "your certificates elsewhere"},
};

// Why a duplicate of f's path is there, when a volume KubeRay adds at that path is among its volumes.
std::string_view LikelyCause(const Finding& f, const RayPodIdentity& identity) {
  for (const KnownMount& known : kKnownMounts) {
    if (f.path != known.path) continue;
    if (!known.container.empty() && (f.kind != "container" || f.container != known.container)) continue;
    if (known.head_only && identity.node_type != RayNodeType::kHead) continue;
    for (std::string_view v : f.volumes) {
      if (v == known.volume) return known.cause;
    }
  }
  return {};
}

}  // namespace

std::string_view KubeRayMountCause(std::string_view volume) {
  for (const KnownMount& known : kKnownMounts) {
    if (known.volume == volume && known.container.empty()) return known.cause;
  }
  return {};
}

std::string CleanMountPath(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  std::size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '/') {
      ++i;
      continue;
    }
    const std::size_t end = std::min(path.find('/', i), path.size());
    const std::string_view segment = path.substr(i, end - i);
    if (segment != ".") {
      if (!out.empty() || path.front() == '/') out += '/';
      out.append(segment);
    }
    i = end;
  }
  if (out.empty() && !path.empty() && path.front() == '/') out = "/";
  return out;
}

std::optional<Denial> CheckDuplicateMounts(const Pod& pod, const std::optional<RayPodIdentity>& identity) {
  std::vector<Finding> findings;
  FindIn(pod.containers, "container", findings);
  FindIn(pod.init_containers, "init container", findings);
  FindIn(pod.ephemeral_containers, "ephemeral container", findings);
  if (findings.empty()) return std::nullopt;

  Denial d = Denial::Invalid(kDuplicateMountRule, "");
  std::string& m = d.message;
  for (std::size_t k = 0; k < findings.size() && k < kMaxReported; ++k) {
    const Finding& f = findings[k];
    if (k > 0) m += "; ";
    m += f.kind;
    m += ' ';
    m += Quote(f.container, 63);
    m += " mounts ";
    m += Quote(f.path);
    m += ' ';
    m += std::to_string(f.count);
    m += " times (volumes";
    for (std::size_t v = 0; v < f.volumes.size() && v < kMaxReported; ++v) {
      m += v == 0 ? " " : ", ";
      m += Quote(f.volumes[v], 63);
    }
    m += ')';
  }
  if (findings.size() > kMaxReported) {
    m += "; and " + std::to_string(findings.size() - kMaxReported) + " more duplicated paths";
  }
  m += ". Each mountPath must be unique within a container.";
  if (identity) {
    m += " This Pod belongs to RayCluster ";
    m += Quote(identity->cluster);
    m += ", group ";
    m += Quote(identity->group.empty() ? std::string_view("(none)") : identity->group);
    std::vector<std::string_view> causes;
    bool unknown = false;
    for (std::size_t k = 0; k < findings.size() && k < kMaxReported; ++k) {
      const std::string_view cause = LikelyCause(findings[k], *identity);
      if (cause.empty()) {
        unknown = true;
      } else if (std::find(causes.begin(), causes.end(), cause) == causes.end()) {
        causes.push_back(cause);
      }
    }
    for (std::size_t k = 0; k < causes.size(); ++k) {
      m += k == 0 ? ": " : "; and ";
      m += causes[k];
    }
    if (unknown) {
      m += causes.empty() ? ": " : ". Besides, ";
      m += "no volume KubeRay adds itself is among ";
      m += causes.empty() ? "the duplicates" : "the other duplicates";
      m += ", so they come from the RayCluster's Pod template or another webhook: check the template";
    }
    m += '.';
  }
  return d;
}

}  // namespace ray_webhook
