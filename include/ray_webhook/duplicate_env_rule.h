// DuplicateEnvRule: warn about env names set twice in one container.
//
// Contract: duplicate names are legal in Kubernetes (the last entry wins) but
// are a symptom of the same shallow-copy bug as duplicate mounts, so this rule
// only warns. Appends at most a handful of warnings to `decision`, each within
// kube-apiserver's warning limits; never denies.
#pragma once

#include "ray_webhook/admission_request.h"
#include "ray_webhook/decision.h"

namespace ray_webhook {

void WarnDuplicateEnv(const Pod& pod, Decision& decision);

}  // namespace ray_webhook
