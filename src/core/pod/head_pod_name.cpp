#include "ray_webhook/core/pod/head_pod_name.h"

#include <charconv>
#include <cstdint>

#include "ray_webhook/core/json/ascii_case.h"
#include "ray_webhook/core/pod/ray_pod.h"

namespace ray_webhook {
// utils.PodName's maxPrefixLength.
constexpr std::size_t kKubeRayPrefix = 50;
constexpr std::size_t kHashedPrefix = 49;

std::string KubeRayHeadPodName(std::string_view cluster) {
  return AsciiLower(cluster.substr(0, kKubeRayPrefix)) + "-head";
}

std::string DeterministicHeadPodName(std::string_view cluster) {
  if (cluster.size() <= kKubeRayPrefix) return KubeRayHeadPodName(cluster);
  const std::string whole = AsciiLower(cluster);
  std::uint64_t hash = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (unsigned char c : whole) {
    hash ^= c;
    hash *= 1099511628211ull;
  }
  std::string name = whole.substr(0, kHashedPrefix);
  // A label may not end in '-', nor a subdomain part in '.'.
  while (!name.empty() && (name.back() == '-' || name.back() == '.')) name.pop_back();
  static constexpr char kHex[] = "0123456789abcdef";
  name += '-';
  for (int shift = 28; shift >= 0; shift -= 4) name += kHex[(hash >> shift) & 0xf];
  return name + "-head";
}

bool IsDeterministicHeadPodName(std::string_view name, std::string_view cluster) {
  return name == DeterministicHeadPodName(cluster) || name == KubeRayHeadPodName(cluster);
}

std::string_view ImageTag(std::string_view image) {
  if (auto at = image.find('@'); at != std::string_view::npos) image = image.substr(0, at);
  const auto slash = image.rfind('/');
  const auto colon = image.rfind(':');
  if (colon == std::string_view::npos || (slash != std::string_view::npos && colon < slash)) return {};
  return image.substr(colon + 1);
}

std::optional<RayVersion> ParseRayVersion(std::string_view tag) {
  RayVersion v;
  const char* p = tag.data();
  const char* end = tag.data() + tag.size();
  auto [after_major, e1] = std::from_chars(p, end, v.major);
  if (e1 != std::errc() || after_major == end || *after_major != '.') return std::nullopt;
  auto [after_minor, e2] = std::from_chars(after_major + 1, end, v.minor);
  if (e2 != std::errc()) return std::nullopt;
  // What follows the minor version must start a new part: ".patch", "-suffix", or nothing.
  if (after_minor != end && *after_minor != '.' && *after_minor != '-') return std::nullopt;
  return v;
}

bool AutoscalerV2ForbidsFixedHeadName(const Pod& pod) {
  const Container* ray = RayContainer(pod);
  if (!ray) return false;
  const EnvVar* flag = FindEnv(*ray, "RAY_enable_autoscaler_v2");
  if (!flag || !flag->value) return false;
  const std::string value = AsciiLower(*flag->value);
  if (value != "1" && value != "true") return false;
  const auto version = ParseRayVersion(ImageTag(ray->image));
  return !version || *version < kFirstRayVersionSafeWithFixedHeadName;
}

}  // namespace ray_webhook
