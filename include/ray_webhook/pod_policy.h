// PodPolicy: the whole decision for one AdmissionRequest.
//
// Contract: a pure function of the request and the configuration; no I/O, no
// clock, no globals, so it can be tested, benchmarked and fuzzed alone.
// Only Pod CREATE is acted on; every other request is allowed unchanged.
//  - both endpoints deny duplicate mount paths (DuplicateMountRule). The
//    mutating endpoint does too because kube-apiserver runs its own Pod
//    validation ("must be unique") after mutating and before validating
//    webhooks, so only a mutating webhook's message reaches the user for
//    exact duplicates (create path: mutating -> strategy validation ->
//    validating);
//  - /mutate plans the FQDN mutation for Ray Pods that are not exempt;
//  - /validate never patches, and warns about duplicate env names.
#pragma once

#include "ray_webhook/admission_request.h"
#include "ray_webhook/config.h"
#include "ray_webhook/decision.h"

namespace ray_webhook {

enum class Endpoint { kMutate, kValidate };

Decision Decide(const AdmissionRequest& request, Endpoint endpoint, const Config& config);

}  // namespace ray_webhook
