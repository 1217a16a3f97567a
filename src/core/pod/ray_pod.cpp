#include "ray_webhook/core/pod/ray_pod.h"

#include "ray_start_address.h"

namespace ray_webhook {

std::optional<RayPodIdentity> IdentifyRayPod(const Pod& pod) {
  const auto cluster = Lookup(pod.metadata.labels, kClusterLabel);
  const auto node_type = Lookup(pod.metadata.labels, kNodeTypeLabel);
  if (!cluster || cluster->empty() || !node_type) return std::nullopt;
  RayPodIdentity id{RayNodeType::kWorker, *cluster, Lookup(pod.metadata.labels, kGroupLabel).value_or("")};
  if (*node_type == "head") {
    id.node_type = RayNodeType::kHead;
  } else if (*node_type != "worker") {
    return std::nullopt;
  }
  return id;
}

bool IsExemptFromMutation(const Pod& pod) {
  return Lookup(pod.metadata.annotations, kMirrorPodAnnotation).has_value() ||
         Lookup(pod.metadata.annotations, kOptOutAnnotation) == std::optional<std::string_view>("true");
}

const EnvVar* FindEnv(const Container& container, std::string_view name) {
  for (const EnvVar& v : container.env) {
    if (v.name == name) return &v;
  }
  return nullptr;
}

std::optional<std::size_t> RayContainerIndex(const Pod& pod) {
  if (pod.containers.empty()) return std::nullopt;
  for (std::size_t i = 0; i < pod.containers.size(); ++i) {
    // getRayContainerIndex compares the value exactly (KubeRay <= 0.6).
    for (const EnvVar& v : pod.containers[i].env) {
      if (v.name == "ray" && v.value == std::optional<std::string_view>("true")) return i;
    }
  }
  return 0;
}

const Container* RayContainer(const Pod& pod) {
  const auto index = RayContainerIndex(pod);
  return index ? &pod.containers[*index] : nullptr;
}

namespace {

std::optional<std::string_view> ShortRayIp(const Container& c) {
  const EnvVar* ray_ip = FindEnv(c, "RAY_IP");
  if (ray_ip && ray_ip->value && IsShortServiceName(*ray_ip->value)) return ray_ip->value;
  return std::nullopt;
}

// "svc" for "svc.<namespace>.svc.<domain>" with a bare svc; nullopt otherwise.
std::optional<std::string_view> ServiceOfFqdn(std::string_view host, std::string_view ns, std::string_view domain) {
  const auto dot = host.find('.');
  if (dot == std::string_view::npos) return std::nullopt;
  const std::string_view service = host.substr(0, dot);
  const std::string_view rest = host.substr(dot + 1);
  if (!IsShortServiceName(service) || rest.size() != ns.size() + 5 + domain.size() || !rest.starts_with(ns) ||
      rest.substr(ns.size(), 5) != ".svc." || !rest.ends_with(domain)) {
    return std::nullopt;
  }
  return service;
}

}  // namespace

std::string HeadServiceName(const Pod& pod, const RayPodIdentity& identity, std::string_view namespace_name,
                            std::string_view cluster_domain) {
  if (const Container* ray = RayContainer(pod)) {
    for (const auto* list : {&ray->command, &ray->args}) {
      for (std::string_view s : *list) {
        for (std::string_view host : AddressHosts(s)) {
          if (IsShortServiceName(host)) return std::string(host);
          if (auto service = ServiceOfFqdn(host, namespace_name, cluster_domain)) return std::string(*service);
        }
      }
    }
    if (auto ip = ShortRayIp(*ray)) return std::string(*ip);
  }
  for (const Container& init : pod.init_containers) {
    if (auto ip = ShortRayIp(init)) return std::string(*ip);
  }
  std::string name(identity.cluster);
  name += "-head-svc";
  return name;
}

std::string HeadServiceFqdn(std::string_view service, std::string_view namespace_name,
                            std::string_view cluster_domain) {
  std::string out;
  out.reserve(service.size() + namespace_name.size() + cluster_domain.size() + 6);
  out.append(service).append(".").append(namespace_name).append(".svc.").append(cluster_domain);
  return out;
}

}  // namespace ray_webhook
