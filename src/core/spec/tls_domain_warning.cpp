#include "tls_domain_warning.h"

#include "spec_json.h"

namespace ray_webhook {

std::optional<std::string> TlsDomainWarning(spec_json::Json object, RayObjectKind kind, const PolicyConfig& policy) {
  // The operator's default domain (ray-operator/controllers/ray/utils/util.go:43@v1.7.0).
  constexpr std::string_view kOperatorDefaultDomain = "cluster.local";
  if (policy.cluster_domain == kOperatorDefaultDomain) return std::nullopt;
  // tlsOptions and the certificates that follow it came with 1.7.0, behind RayClusterMTLS.
  if (policy.kuberay.version < KubeRayVersion{1, 7, 0} || !policy.kuberay.GateEnabled("RayClusterMTLS")) {
    return std::nullopt;
  }
  const std::string_view cluster_path = ClusterSpecPath(kind);
  const spec_json::Json cluster_spec = spec_json::At(object, cluster_path);
  if (spec_json::Boolean(spec_json::At(cluster_spec, "tlsOptions.enabled")) != true) return std::nullopt;
  // The head certificate's SAN is GenerateFQDNServiceName, with the operator's
  // GetClusterDomainName (raycluster_mtls_controller.go:289@v1.7.0).
  return "tls-cluster-domain: " + spec_json::Field(cluster_path, "tlsOptions.enabled") +
         ": KubeRay names the head certificate <head service>.<namespace>.svc.<its CLUSTER_DOMAIN, " +
         std::string(kOperatorDefaultDomain) + " unless set>, and ray-webhook points workers at .svc." +
         policy.cluster_domain + ": unless the operator runs with CLUSTER_DOMAIN=" + policy.cluster_domain +
         ", the workers' TLS handshake with the head fails";
}

}  // namespace ray_webhook
