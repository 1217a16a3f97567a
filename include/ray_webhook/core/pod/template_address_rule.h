// TemplateAddressRule: an explicit worker rayStartParams.address that the
// FQDN mutation would leave a bare name.
//
// Contract: pure. KubeRay keeps a worker group's rayStartParams.address as
// written (setMissingRayStartParams in ray-operator/controllers/ray/common/pod.go)
// and writes it into `ray start` as " --address=VALUE " (convertParamMap).
// The FQDN mutation qualifies `--address=HOST:PORT` only when HOST is a bare
// service name (IsShortServiceName) and PORT is decimal. A finding is
// returned for each worker group whose value has a dot-less host that stays
// bare after the mutation: "$RAY_IP" or "${RAY_IP}" (the head service's bare
// name), a name that is not a lowercase DNS label, or no decimal port. Not
// for hosts with a dot, IP addresses, localhost or other variables, nor for a
// group whose command KubeRay leaves alone (the template's Ray container
// already runs "ray start", or ray.io/overwrite-container-cmd is "true").
// Returns findings only: they are warnings, since a bare name works where the
// cluster's DNS resolves it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ray_webhook/core/model/ray_cluster_spec.h"
#include "ray_webhook/core/pod/template_finding.h"

namespace ray_webhook {

inline constexpr std::string_view kBareAddressRule = "bare-address";

// Why the FQDN mutation would leave this rayStartParams.address bare, or nullopt.
std::optional<std::string> BareAddressReason(std::string_view value);

std::vector<TemplateFinding> CheckTemplateAddresses(const RayObject& object);

}  // namespace ray_webhook
