// TlsDomainWarning: a RayCluster with KubeRay's mTLS on, in a cluster whose
// domain ray-webhook knows as other than cluster.local.
//
// Contract: pure. KubeRay 1.7 names the head certificate's DNS SAN with the
// operator's own CLUSTER_DOMAIN (cluster.local unless set), while the FQDN
// mutation writes the workers' head address with --cluster-domain: when the
// two differ, the workers' TLS handshake with the head fails. ray-webhook
// cannot read the operator's environment, so it warns, at CREATE, when the
// object enables tlsOptions, the target release and its RayClusterMTLS gate
// build certificates, and its own domain is not the operator's default.
#pragma once

#include <optional>
#include <string>

#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/core/model/ray_cluster_spec.h"
#include "spec_json.h"

namespace ray_webhook {

// `object` is the object's parsed JSON, the one parse the spec rules read too.
std::optional<std::string> TlsDomainWarning(spec_json::Json object, RayObjectKind kind, const PolicyConfig& policy);

}  // namespace ray_webhook
