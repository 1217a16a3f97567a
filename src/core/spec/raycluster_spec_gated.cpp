// The cluster spec options behind feature gates of KubeRay v1.7.0: the
// history server's collector, network policies and mTLS. With its gate off
// KubeRay refuses the option itself; with it on, what the option holds
// (ValidateRayClusterSpec, validateCollectorOptions, validateNetworkPolicy,
// validateTLSOptions and validateNoConflictingTLSVolumeMount).
#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <set>

#include "ray_webhook/core/json/ascii_case.h"
#include "raycluster_spec_checks.h"
#include "raycluster_spec_support.h"

namespace ray_webhook::cluster_spec {

using spec_json::Member;
using spec_json::Present;
using spec_json::String;

namespace {

// utils.CollectorContainerName.
constexpr std::string_view kCollectorContainer = "ray-history-collector";
// utils.RayTLSVolumeName and utils.RayTLSCertMountPath.
constexpr std::string_view kTlsVolume = "ray-tls";
constexpr std::string_view kTlsMountPath = "/etc/ray/tls";
constexpr std::array<std::string_view, 4> kTlsEnv = {"RAY_USE_TLS", "RAY_TLS_SERVER_CERT", "RAY_TLS_SERVER_KEY",
                                                     "RAY_TLS_CA_CERT"};

std::string LowerTrimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return AsciiLower(s);
}

// With its gate off KubeRay refuses the option itself, whatever it holds.
void RefuseWithoutGate(const SpecContext& ctx, std::string_view field, std::string_view rule, std::string_view gate,
                       std::vector<SpecFinding>& out) {
  if (!Present(SpecField(ctx, field))) return;
  Add(out, rule, SpecPath(ctx, field),
      std::string(field) + " needs the operator's " + std::string(gate) + " feature gate");
}

// utils.IsTLSEnabled, the gate aside: tlsOptions.enabled is true.
bool TlsEnabled(const SpecContext& ctx) { return spec_json::Boolean(SpecField(ctx, "tlsOptions.enabled")) == true; }

void TlsEnvOf(Json container, const std::string& path, const std::string& where, std::vector<SpecFinding>& out) {
  for (const std::string_view name : kTlsEnv) {
    if (const std::optional<EnvEntry> env = EnvVar(container, path, name)) {
      Add(out, "tls-options", env->path,
          "with tlsOptions enabled KubeRay sets " + std::string(name) + " in " + where + " itself; remove it");
    }
  }
}

void TlsMountsOf(Json mounts, const std::string& path, const std::string& where, std::vector<SpecFinding>& out) {
  if (!spec_json::IsArray(mounts)) return;
  for (std::size_t i = 0; i < mounts.Size(); ++i) {
    const Json mount = mounts.Nth(i);
    const bool name = String(Member(mount, "name")) == kTlsVolume;
    if (!name && String(Member(mount, "mountPath")) != kTlsMountPath) continue;
    Add(out, "tls-volume-mount", path + "[" + std::to_string(i) + "]",
        std::string(
            "with tlsOptions enabled KubeRay mounts the certificates itself (volume ray-tls at /etc/ray/tls); ") +
            where + " cannot mount that " + (name ? "name" : "path"));
  }
}

// The rules of a networkPolicy head, worker or workerGroups entry that its mode does not restrict.
void RulesAgainstMode(Json rules, const std::string& path, std::string_view mode, std::vector<SpecFinding>& out) {
  if (mode == "DenyAllEgress" && spec_json::NonEmptyArray(Member(rules, "ingressRules"))) {
    Add(out, "network-policy", path + ".ingressRules",
        "mode DenyAllEgress leaves ingress open, so ingress rules have nothing to allow; remove them or use mode "
        "DenyAll");
  }
  if (mode == "DenyAllIngress" && spec_json::NonEmptyArray(Member(rules, "egressRules"))) {
    Add(out, "network-policy", path + ".egressRules",
        "mode DenyAllIngress leaves egress open, so egress rules have nothing to allow; remove them or use mode "
        "DenyAll");
  }
}

}  // namespace

void CheckHistoryServerGate(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  RefuseWithoutGate(ctx, "historyServerOptions", "history-server-gate", "RayClusterHistoryServer", out);
}

void CheckHistoryCollectorOptions(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  Json history = SpecField(ctx, "historyServerOptions");
  if (!Present(history)) return;
  Json collector = Member(history, "collectorOptions");
  if (!Present(collector)) {
    Add(out, "history-collector-options", SpecPath(ctx, "historyServerOptions.collectorOptions"),
        "historyServerOptions needs collectorOptions, the collector sidecar KubeRay adds to every Ray pod");
    return;
  }
  if (!spec_json::NonEmptyString(Member(collector, "image"))) {
    Add(out, "history-collector-options", SpecPath(ctx, "historyServerOptions.collectorOptions.image"),
        "the history server collector needs an image");
  }
}

void CheckHistoryCollectorEnv(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  Json collector = SpecField(ctx, "historyServerOptions.collectorOptions");
  if (!Present(collector)) return;
  Json env = Member(collector, "env");
  const std::string env_path = SpecPath(ctx, "historyServerOptions.collectorOptions.env");
  // KubeRay reads the list as a map: the last entry of a name holds.
  std::map<std::string, Json, std::less<>> by_name;
  if (spec_json::IsArray(env)) {
    for (const Json e : env.Elements()) {
      if (const std::optional<std::string_view> name = String(Member(e, "name"))) by_name[std::string(*name)] = e;
    }
  }
  for (const std::string_view name : {"POD_IP", "FQ_RAY_IP", "RAY_CLUSTER_NAME", "RAY_CLUSTER_NAMESPACE", "RAY_ROLE",
                                      "OWNER_KIND", "OWNER_NAME", "EVENTS_PORT"}) {
    if (const std::optional<std::size_t> i = IndexWhere(env, "name", name)) {
      Add(out, "history-collector-env", env_path + "[" + std::to_string(*i) + "]",
          "KubeRay sets " + std::string(name) + " in the collector container itself; remove it");
    }
  }
  const auto literal = [&](std::string_view name) -> std::string_view {
    const auto it = by_name.find(name);
    return it == by_name.end() ? std::string_view() : String(Member(it->second, "value")).value_or("");
  };
  // Set with a literal value or taken from a source.
  const auto has_value = [&](std::string_view name) {
    const auto it = by_name.find(name);
    return it != by_name.end() && (!literal(name).empty() || Present(Member(it->second, "valueFrom")));
  };
  const std::string_view backend = literal("STORAGE_BACKEND");
  if (backend.empty()) {
    Add(out, "history-collector-env", env_path,
        "the collector needs STORAGE_BACKEND set to a literal value (GCS, S3, AZUREBLOB, ALIYUNOSS, ...)");
    return;
  }
  std::vector<std::string_view> missing;
  const std::string kind = AsciiUpper(backend);
  if (kind == "GCS" && !has_value("GCS_BUCKET")) missing.push_back("GCS_BUCKET");
  if (kind == "S3" && !has_value("S3_REGION")) missing.push_back("S3_REGION");
  if (kind == "ALIYUNOSS") {
    for (const std::string_view name : {"OSS_BUCKET", "OSS_ENDPOINT", "OSS_REGION"}) {
      if (!has_value(name)) missing.push_back(name);
    }
  }
  if (kind == "AZUREBLOB") {
    const std::string mode = LowerTrimmed(literal("AZURE_STORAGE_AUTH_MODE"));
    const bool connection = has_value("AZURE_STORAGE_CONNECTION_STRING");
    const bool account = has_value("AZURE_STORAGE_ACCOUNT_URL");
    if (mode == "connection_string" && !connection) missing.push_back("AZURE_STORAGE_CONNECTION_STRING");
    if ((mode == "workload_identity" || mode == "default") && !account) missing.push_back("AZURE_STORAGE_ACCOUNT_URL");
    if (mode != "connection_string" && mode != "workload_identity" && mode != "default" && !connection && !account) {
      missing.push_back("AZURE_STORAGE_CONNECTION_STRING or AZURE_STORAGE_ACCOUNT_URL");
    }
  }
  for (const std::string_view name : missing) {
    Add(out, "history-collector-env", env_path,
        "the collector's storage backend " + std::string(backend) + " needs " + std::string(name) + " set");
  }
}

void CheckHistoryCollectorContainerName(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!Present(SpecField(ctx, "historyServerOptions"))) return;
  for (const Group& group : AllGroups(ctx)) {
    const std::optional<std::size_t> i = IndexWhere(Containers(group), "name", kCollectorContainer);
    if (!i) continue;
    Add(out, "history-collector-container-name", ContainersPath(group) + "[" + std::to_string(*i) + "].name",
        "KubeRay adds the history server collector as container ray-history-collector; " + group.Name() +
            " cannot have a container of that name");
  }
}

void CheckNetworkPolicyGate(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  RefuseWithoutGate(ctx, "networkPolicy", "network-policy-gate", "RayClusterNetworkPolicy", out);
}

void CheckNetworkPolicy(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  Json policy = SpecField(ctx, "networkPolicy");
  if (!Present(policy)) return;
  // The CRD's default mode.
  const std::string_view mode = String(Member(policy, "mode")).value_or("DenyAll");
  const std::string path = SpecPath(ctx, "networkPolicy");
  RulesAgainstMode(Member(policy, "head"), path + ".head", mode, out);
  RulesAgainstMode(Member(policy, "worker"), path + ".worker", mode, out);
  std::set<std::string_view> group_names;
  for (const Group& group : WorkerGroups(ctx)) {
    if (const std::optional<std::string_view> name = String(Member(group.spec, "groupName"))) {
      group_names.insert(*name);
    }
  }
  Json per_group = Member(policy, "workerGroups");
  if (!spec_json::IsArray(per_group)) return;
  for (std::size_t i = 0; i < per_group.Size(); ++i) {
    const Json entry = per_group.Nth(i);
    const std::string entry_path = spec_json::Item(path, "workerGroups", i);
    RulesAgainstMode(entry, entry_path, mode, out);
    const std::optional<std::string_view> name = String(Member(entry, "groupName"));
    if (name && !group_names.contains(*name)) {
      Add(out, "network-policy", entry_path + ".groupName",
          "no worker group is named \"" + std::string(*name) + "\"; name one of workerGroupSpecs");
    }
  }
}

void CheckNetworkPolicyGroupNames(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!Present(SpecField(ctx, "networkPolicy"))) return;
  for (const Group& group : WorkerGroups(ctx)) {
    const std::optional<std::string_view> name = String(Member(group.spec, "groupName"));
    if (!name || IsDns1123Label(*name)) continue;
    Add(out, "network-policy-group-names", group.path + ".groupName",
        "with networkPolicy set, a worker group name goes into a NetworkPolicy name, so it must be a DNS-1123 "
        "label: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit");
  }
}

void CheckTlsOptionsGate(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  RefuseWithoutGate(ctx, "tlsOptions", "tls-options-gate", "RayClusterMTLS", out);
}

void CheckTlsEnv(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!TlsEnabled(ctx)) return;
  for (const Group& group : AllGroups(ctx)) TlsEnvOf(RayContainer(group), RayContainerPath(group), group.Name(), out);
  TlsEnvOf(SpecField(ctx, "autoscalerOptions"), SpecPath(ctx, "autoscalerOptions"), "the autoscaler", out);
}

void CheckTlsVolumeMount(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!TlsEnabled(ctx)) return;
  for (const Group& group : AllGroups(ctx)) {
    TlsMountsOf(Member(RayContainer(group), "volumeMounts"), RayContainerPath(group) + ".volumeMounts", group.Name(),
                out);
  }
  TlsMountsOf(SpecField(ctx, "autoscalerOptions.volumeMounts"), SpecPath(ctx, "autoscalerOptions.volumeMounts"),
              "the autoscaler", out);
}

}  // namespace ray_webhook::cluster_spec
