#include "ray_webhook/core/pod/fqdn_mutation.h"

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ray_start_address.h"
#include "ray_webhook/core/json/json_pointer.h"

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

// Rewrites every string of `strings` that names the bare service; `rewritten_from`
// gets the element each operation replaces, in the order of the operations, for
// the generated start command below.
void RewriteAddresses(const std::vector<std::string_view>& strings, std::string_view container, std::string_view field,
                      std::string_view service, std::string_view fqdn, Decision& decision,
                      std::vector<const std::string_view*>& rewritten_from) {
  for (std::size_t j = 0; j < strings.size(); ++j) {
    if (auto rewritten = RewriteRayStartAddress(strings[j], service, fqdn)) {
      decision.patch.push_back(
          {"replace", JsonPointer({"spec", "containers", container, field, std::to_string(j)}), std::move(*rewritten)});
      decision.mutations.push_back(Mutation::kAddressRewritten);
      rewritten_from.push_back(&strings[j]);
    }
  }
}

// Non-overlapping occurrences of `needle` (not empty) in `text`, as Go's strings.Count counts them.
std::size_t CountOccurrences(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string_view::npos; at = text.find(needle, at + needle.size())) {
    ++n;
  }
  return n;
}

// KubeRay's env KUBERAY_GEN_RAY_START_CMD holds the `ray start` command it wrote into args[0]
// (ray-operator/controllers/ray/common/pod.go:1279@v1.7.0). KubeRay 1.8's Pod webhook finds that exact text in
// args[0] and refuses the worker unless it occurs once, so where the command was qualified the env must be too.
// Only when every command and args string that held the env's text holds the qualified text as often afterwards:
// otherwise the two no longer match and the env is left as the operator wrote it.
void QualifyGeneratedStartCommand(const Container& ray, std::string_view at, std::size_t first_rewrite,
                                  const std::vector<const std::string_view*>& rewritten_from, std::string_view service,
                                  std::string_view fqdn, Decision& decision) {
  std::size_t k = 0;
  while (k < ray.env.size() && ray.env[k].name != "KUBERAY_GEN_RAY_START_CMD") ++k;  // KubeRay reads the first
  if (k == ray.env.size() || !ray.env[k].value || ray.env[k].value->empty()) return;
  const std::string_view generated = *ray.env[k].value;
  std::optional<std::string> qualified = RewriteRayStartAddress(generated, service, fqdn);
  if (!qualified) return;
  bool found = false;
  for (const auto* list : {&ray.command, &ray.args}) {
    for (const std::string_view& original : *list) {
      const std::size_t before = CountOccurrences(original, generated);
      std::string_view after = original;
      for (std::size_t r = 0; r < rewritten_from.size(); ++r) {
        if (rewritten_from[r] == &original) {
          after = std::get<std::string>(decision.patch[first_rewrite + r].value);
        }
      }
      if (CountOccurrences(after, *qualified) != before) return;
      found |= before > 0;
    }
  }
  if (!found) return;
  decision.patch.push_back(
      {"replace", JsonPointer({"spec", "containers", at, "env", std::to_string(k), "value"}), std::move(*qualified)});
  decision.mutations.push_back(Mutation::kGeneratedStartCommandRewritten);
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
    const std::size_t first_rewrite = decision.patch.size();
    std::vector<const std::string_view*> rewritten_from;  // allocates only when something is rewritten
    RewriteAddresses(ray.command, at, "command", service, fqdn, decision, rewritten_from);
    RewriteAddresses(ray.args, at, "args", service, fqdn, decision, rewritten_from);
    if (!rewritten_from.empty()) {
      QualifyGeneratedStartCommand(ray, at, first_rewrite, rewritten_from, service, fqdn, decision);
    }
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
