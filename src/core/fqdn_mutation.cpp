#include "fqdn_mutation.h"

#include <string>

#include "json_pointer.h"
#include "ray_start_address.h"

namespace ray_webhook {
namespace {

// Adds FQ_RAY_IP and RAY_IP where absent. An existing entry wins whatever its
// value, since the user or the operator set it on purpose.
void EnsureHeadEnv(const Container& c, std::string_view list, std::size_t index, std::string_view service,
                   std::string_view fqdn, Decision& decision) {
  const bool add_fq_ray_ip = !FindEnv(c, "FQ_RAY_IP");
  const bool add_ray_ip = !FindEnv(c, "RAY_IP");
  if (add_fq_ray_ip) decision.mutations.push_back(Mutation::kFqRayIpAdded);
  if (add_ray_ip) decision.mutations.push_back(Mutation::kRayIpAdded);
  if (!add_fq_ray_ip && !add_ray_ip) return;
  const std::string i = std::to_string(index);
  if (!c.has_env_list) {
    // "add" on an absent (or null) member creates it; the list did not exist, so nothing is replaced.
    std::vector<EnvEntry> env;
    if (add_fq_ray_ip) env.push_back({"FQ_RAY_IP", std::string(fqdn)});
    if (add_ray_ip) env.push_back({"RAY_IP", std::string(service)});
    decision.patch.push_back({"add", JsonPointer({"spec", list, i, "env"}), std::move(env)});
    return;
  }
  // Appended one by one, each entry straight into its operation (KubeRay's containers have env lists).
  if (add_fq_ray_ip) {
    decision.patch.push_back(
        {"add", JsonPointer({"spec", list, i, "env", "-"}), EnvEntry{"FQ_RAY_IP", std::string(fqdn)}});
  }
  if (add_ray_ip) {
    decision.patch.push_back(
        {"add", JsonPointer({"spec", list, i, "env", "-"}), EnvEntry{"RAY_IP", std::string(service)}});
  }
}

void RewriteAddresses(const std::vector<std::string_view>& strings, std::string_view container, std::string_view field,
                      std::string_view service, std::string_view fqdn, Decision& decision) {
  for (std::size_t j = 0; j < strings.size(); ++j) {
    if (auto rewritten = RewriteRayStartAddress(strings[j], service, fqdn)) {
      decision.patch.push_back(
          {"replace", JsonPointer({"spec", "containers", container, field, std::to_string(j)}), std::move(*rewritten)});
      decision.mutations.push_back(Mutation::kAddressRewritten);
    }
  }
}

}  // namespace

void PlanFqdnMutation(const Pod& pod, const RayPodIdentity& identity, std::string_view namespace_name,
                      std::string_view cluster_domain, Decision& decision) {
  const std::string service = HeadServiceName(pod, identity, namespace_name, cluster_domain);
  const std::string fqdn = HeadServiceFqdn(service, namespace_name, cluster_domain);

  // A KubeRay worker gets up to five operations and changes: one allocation
  // each instead of four as the lists grow. Room for eight operations stays
  // within the sizes glibc's per-thread cache serves (at most 1,032 bytes);
  // above them malloc takes its slower path through the bins.
  static_assert(8 * sizeof(PatchOperation) <= 1032);
  decision.patch.reserve(decision.patch.size() + 8);
  decision.mutations.reserve(decision.mutations.size() + 8);

  const std::optional<std::size_t> index = RayContainerIndex(pod);
  if (index && identity.node_type == RayNodeType::kWorker) {
    const Container& ray = pod.containers[*index];
    const std::string at = std::to_string(*index);
    RewriteAddresses(ray.command, at, "command", service, fqdn, decision);
    RewriteAddresses(ray.args, at, "args", service, fqdn, decision);
    for (std::size_t k = 0; k < ray.env.size(); ++k) {
      const EnvVar& v = ray.env[k];
      if (v.name != "RAY_ADDRESS" || !v.value) continue;
      if (auto rewritten = RewriteHostPort(*v.value, service, fqdn)) {
        decision.patch.push_back({"replace", JsonPointer({"spec", "containers", at, "env", std::to_string(k), "value"}),
                                  std::move(*rewritten)});
        decision.mutations.push_back(Mutation::kRayAddressRewritten);
      }
    }
    EnsureHeadEnv(ray, "containers", *index, service, fqdn, decision);
  }
  for (std::size_t i = 0; i < pod.init_containers.size(); ++i) {
    EnsureHeadEnv(pod.init_containers[i], "initContainers", i, service, fqdn, decision);
  }
}

}  // namespace ray_webhook
