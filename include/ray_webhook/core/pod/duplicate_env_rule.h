// DuplicateEnvRule: warn about env names set twice in one container.
//
// Contract: duplicate names are legal in Kubernetes (the last entry wins) but
// are a symptom of the same shallow-copy bug as duplicate mounts, so this rule
// only warns. Returns at most a handful of warnings, each within
// kube-apiserver's warning limits; never denies.
#pragma once

#include <string>
#include <vector>

#include "ray_webhook/core/model/admission_request.h"

namespace ray_webhook {

std::vector<std::string> DuplicateEnvWarnings(const Pod& pod);

}  // namespace ray_webhook
