#include "worker_spec.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>

namespace ray_webhook {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kTokenVolumePrefix = "kube-api-access-";
constexpr std::array<std::string_view, 3> kPerPodEnv = {"TPU_WORKER_ID", "TPU_WORKER_HOSTNAMES", "TPU_NAME"};

// "kube-api-access-" and five lowercase letters or digits (the ServiceAccount
// admission plugin's names.SimpleNameGenerator suffix).
bool IsGeneratedTokenVolume(const Json& name) {
  if (!name.is_string()) return false;
  const std::string& n = name.get_ref<const std::string&>();
  if (n.size() != kTokenVolumePrefix.size() + 5 || !n.starts_with(kTokenVolumePrefix)) return false;
  return std::all_of(n.begin() + kTokenVolumePrefix.size(), n.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) != 0 || std::isdigit(static_cast<unsigned char>(c)) != 0;
  });
}

void NormaliseContainers(Json& spec, const char* list) {
  auto it = spec.find(list);
  if (it == spec.end() || !it->is_array()) return;
  for (Json& container : *it) {
    if (!container.is_object()) continue;
    if (auto mounts = container.find("volumeMounts"); mounts != container.end() && mounts->is_array()) {
      for (Json& m : *mounts) {
        if (m.is_object() && m.contains("name") && IsGeneratedTokenVolume(m["name"])) m["name"] = "kube-api-access";
      }
    }
    if (auto env = container.find("env"); env != container.end() && env->is_array()) {
      for (Json& e : *env) {
        if (!e.is_object()) continue;
        auto name = e.find("name");
        if (name == e.end() || !name->is_string()) continue;
        const std::string& n = name->get_ref<const std::string&>();
        if (std::find(kPerPodEnv.begin(), kPerPodEnv.end(), n) != kPerPodEnv.end()) e.erase("value");
      }
    }
  }
}

// Appends where `to` differs from `from` under `path`, at most limit entries. Lists are compared as
// insertions and removals around their common first and last items, so one mount added in the middle is
// one "added" entry, not a change of every item after it. Recursion follows the documents' depth, which
// the Auditor bounds.
void Diff(const Json& from, const Json& to, const std::string& path, std::size_t limit, std::vector<std::string>& out) {
  if (out.size() >= limit || from == to) return;
  if (from.is_object() && to.is_object()) {
    for (auto it = from.begin(); it != from.end(); ++it) {
      if (!to.contains(it.key())) {
        out.push_back(path + "." + it.key() + " (removed)");
      } else {
        Diff(*it, to[it.key()], path + "." + it.key(), limit, out);
      }
      if (out.size() >= limit) return;
    }
    for (auto it = to.begin(); it != to.end() && out.size() < limit; ++it) {
      if (!from.contains(it.key())) out.push_back(path + "." + it.key() + " (added)");
    }
    return;
  }
  if (from.is_array() && to.is_array()) {
    const std::size_t na = from.size(), nb = to.size();
    std::size_t prefix = 0;
    while (prefix < na && prefix < nb && from[prefix] == to[prefix]) ++prefix;
    std::size_t suffix = 0;
    while (suffix < na - prefix && suffix < nb - prefix && from[na - 1 - suffix] == to[nb - 1 - suffix]) ++suffix;
    const std::size_t ma = na - prefix - suffix, mb = nb - prefix - suffix;
    const auto at = [&](std::size_t i) { return path + "[" + std::to_string(i) + "]"; };
    for (std::size_t i = 0; i < std::min(ma, mb) && out.size() < limit; ++i) {
      Diff(from[prefix + i], to[prefix + i], at(prefix + i), limit, out);
    }
    for (std::size_t i = std::min(ma, mb); i < mb && out.size() < limit; ++i)
      out.push_back(at(prefix + i) + " (added)");
    for (std::size_t i = std::min(ma, mb); i < ma && out.size() < limit; ++i) {
      out.push_back(at(prefix + i) + " (removed)");
    }
    return;
  }
  out.push_back(path + " (changed)");
}

}  // namespace

Json WorkerSpecOf(const Json& pod) {
  auto it = pod.find("spec");
  if (it == pod.end() || !it->is_object()) return Json::object();
  Json spec = *it;
  for (const char* per_pod : {"nodeName", "hostname", "subdomain", "ephemeralContainers", "schedulingGates"}) {
    spec.erase(per_pod);
  }
  if (auto volumes = spec.find("volumes"); volumes != spec.end() && volumes->is_array()) {
    for (Json& v : *volumes) {
      if (v.is_object() && v.contains("name") && IsGeneratedTokenVolume(v["name"])) v["name"] = "kube-api-access";
    }
  }
  NormaliseContainers(spec, "containers");
  NormaliseContainers(spec, "initContainers");
  return spec;
}

std::vector<std::string> SpecDifferences(const Json& from, const Json& to, std::size_t max) {
  std::vector<std::string> out;
  Diff(from, to, "spec", max + 1, out);
  if (out.size() > max) {
    out.resize(max);
    out.push_back("...");
  }
  return out;
}

}  // namespace ray_webhook
