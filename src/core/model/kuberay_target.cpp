#include "ray_webhook/core/model/kuberay_target.h"

#include <array>
#include <charconv>

namespace ray_webhook {

namespace {

// A gate's default from the release that introduced it or changed it on:
// ray-operator/pkg/features/features.go at each tag (v1.2.0 is the first with
// the file). Rows for one gate are in release order; the last row at or
// before the target's version holds.
struct GateDefault {
  std::string_view gate;
  KubeRayVersion since;
  bool enabled;
};

constexpr std::array kGateDefaults = {
    GateDefault{"RayClusterStatusConditions", {1, 2, 0}, false},
    GateDefault{"RayClusterStatusConditions", {1, 3, 0}, true},
    GateDefault{"RayJobDeletionPolicy", {1, 3, 0}, false},
    GateDefault{"RayJobDeletionPolicy", {1, 6, 0}, true},
    GateDefault{"RayMultiHostIndexing", {1, 5, 0}, false},
    GateDefault{"RayMultiHostIndexing", {1, 6, 0}, true},
    GateDefault{"RayServiceIncrementalUpgrade", {1, 5, 0}, false},
    GateDefault{"RayServiceIncrementalUpgrade", {1, 7, 0}, true},
    GateDefault{"RayCronJob", {1, 6, 0}, false},
    GateDefault{"AsyncJobInfoQuery", {1, 6, 0}, false},
    GateDefault{"SidecarSubmitterRestart", {1, 7, 0}, false},
    GateDefault{"RayClusterNetworkPolicy", {1, 7, 0}, false},
    GateDefault{"GCSFaultToleranceEmbeddedStorage", {1, 7, 0}, false},
    GateDefault{"RayClusterMTLS", {1, 7, 0}, false},
    GateDefault{"RayClusterHistoryServer", {1, 7, 0}, false},
    GateDefault{"KubernetesWAS", {1, 7, 0}, false},
};

bool ParseNumber(std::string_view text, int* out) {
  // from_chars takes a leading '-'; a release number has digits only.
  if (text.empty() || text.size() > 6 || text.front() < '0' || text.front() > '9') return false;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

std::optional<KubeRayVersion> ParseKubeRayVersion(std::string_view text) {
  if (text.starts_with('v')) text.remove_prefix(1);
  KubeRayVersion v;
  int* parts[] = {&v.major, &v.minor, &v.patch};
  for (int i = 0; i < 3; ++i) {
    const std::size_t dot = i < 2 ? text.find('.') : text.size();
    if (dot == std::string_view::npos || !ParseNumber(text.substr(0, dot), parts[i])) return std::nullopt;
    text.remove_prefix(i < 2 ? dot + 1 : dot);
  }
  return v;
}

std::string ShowKubeRayVersion(KubeRayVersion v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

bool KubeRayTarget::GateEnabled(std::string_view gate) const {
  if (const auto named = feature_gates.find(gate); named != feature_gates.end()) return named->second;
  bool enabled = false;
  for (const GateDefault& row : kGateDefaults) {
    if (row.gate == gate && row.since <= version) enabled = row.enabled;
  }
  return enabled;
}

Status ParseFeatureGates(std::string_view text, std::map<std::string, bool, std::less<>>* out) {
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    const std::string_view item = Trim(text.substr(0, comma));
    text.remove_prefix(comma == std::string_view::npos ? text.size() : comma + 1);
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    const std::string_view name = Trim(item.substr(0, eq));
    const std::string_view value = eq == std::string_view::npos ? "" : Trim(item.substr(eq + 1));
    if (name.empty() || (value != "true" && value != "false")) {
      return Status::Error("feature gate '" + std::string(item) + "' is not NAME=true or NAME=false");
    }
    (*out)[std::string(name)] = value == "true";
  }
  return Status::Ok();
}

}  // namespace ray_webhook
