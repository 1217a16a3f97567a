// A RayCluster's name, its worker group names and its upgrade strategy:
// ValidateRayClusterMetadata, ValidateRayClusterUpgradeOptions and the
// RayCluster webhook's validateWorkerGroups. They read the RayCluster object
// itself, not a cluster spec inside a RayJob or RayService.
#include <set>

#include "raycluster_spec_checks.h"
#include "raycluster_spec_support.h"

namespace ray_webhook::cluster_spec {

using spec_json::Member;
using spec_json::String;

namespace {

// utils.MaxRayClusterNameLength: the head Service and Pod names add suffixes.
constexpr std::size_t kMaxClusterNameLength = 53;

std::optional<std::string_view> Name(const SpecContext& ctx) {
  return String(spec_json::At(ctx.object, "metadata.name"));
}

// A DNS-1035 label's characters, whatever its length: [a-z]([-a-z0-9]*[a-z0-9])?.
bool LabelShaped(std::string_view name) {
  if (name.empty() || name.front() < 'a' || name.front() > 'z' || name.back() == '-') return false;
  for (const char c : name) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) return false;
  }
  return true;
}

}  // namespace

void CheckClusterNameLength(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const std::optional<std::string_view> name = Name(ctx);
  if (!name || name->size() <= kMaxClusterNameLength) return;
  Add(out, "cluster-name-length", "metadata.name",
      "a RayCluster name can have at most " + std::to_string(kMaxClusterNameLength) +
          " characters, as KubeRay names the cluster's Services and Pods after it; this one has " +
          std::to_string(name->size()));
}

void CheckClusterNameDnsLabel(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const std::optional<std::string_view> name = Name(ctx);
  // Its length is cluster-name-length's finding (the webhook's older check had no length).
  if (!name || name->empty() || LabelShaped(*name)) return;
  Add(out, "cluster-name-dns-label", "metadata.name",
      "a RayCluster name must be a DNS-1035 label: lowercase letters, digits and '-', starting with a letter and "
      "ending with a letter or digit, as it names the cluster's Services");
}

void CheckGroupNamesUnique(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  std::set<std::string_view> seen;
  for (const Group& group : WorkerGroups(ctx)) {
    const std::optional<std::string_view> name = String(Member(group.spec, "groupName"));
    if (!name) continue;
    if (!seen.insert(*name).second) {
      Add(out, "group-name-unique", group.path + ".groupName",
          "worker group names must be unique; another worker group is already named \"" + std::string(*name) + "\"");
    }
  }
}

void CheckUpgradeStrategy(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const std::optional<std::string_view> type = String(SpecField(ctx, "upgradeStrategy.type"));
  if (!type) return;
  const std::string path = SpecPath(ctx, "upgradeStrategy.type");
  if (*type != "Recreate" && *type != "None") {
    Add(out, "upgrade-strategy", path, "the upgrade strategy of a RayCluster must be Recreate or None");
    return;
  }
  // utils.GetCRDType: the label names the kind that created the cluster.
  const std::optional<std::string_view> creator = spec_json::Label(ctx.object, "ray.io/originated-from-crd");
  if (creator == "RayJob" || creator == "RayService") {
    Add(out, "upgrade-strategy", path,
        "only a RayCluster created directly takes an upgrade strategy; this one was created by a " +
            std::string(*creator));
  }
}

}  // namespace ray_webhook::cluster_spec
