// PodPolicy: the whole decision for one AdmissionRequest.
//
// Contract: a pure function of the request, the configuration and the facts
// the edge gathered from the cluster (the head Pods listed from the API); no
// I/O, no clock, no globals, so it can be tested, benchmarked and fuzzed
// alone. Only Pod CREATE and the ray.io writes below are acted on; every
// other request is allowed unchanged. Rules run in this order and the first denial ends the review:
//  - both endpoints: DuplicateMountRule. The mutating endpoint applies it too
//    because kube-apiserver runs its own Pod validation ("must be unique")
//    after mutating and before validating webhooks, so only a mutating
//    webhook's message reaches the user for exact duplicates (create path:
//    mutating -> strategy validation -> validating);
//  - /mutate: the FQDN mutation, and the deterministic head name;
//  - /validate (never patches): HeadNameRule, SecondHeadRule, and warnings
//    for duplicate env names;
//  - /admit, both in one call from the mutating configuration: the mutation,
//    then /validate's rules judged on the Pod as the patch leaves it (the head
//    name it sets; a generateName head that it does not name would get a
//    random name, which HeadNameRule refuses as /validate would).
// CREATE and UPDATE of a ray.io RayCluster, RayJob or RayService is acted on
// at /validate and /admit only (the mutating entry never sends them): the duplicate-mount
// rule (TemplateMountRule, duplicate_mount_mode), the long-name check of the
// head-name rule (ClusterHeadNameRule, CREATE only, a warning unless
// head_name_mode is off) and warnings for bare worker addresses
// (TemplateAddressRule) run over the Pods KubeRay would build from its group
// templates. On UPDATE only findings the
// stored object (request.oldObject) did not have count.
// The rules return findings; only this policy applies each rule's mode
// (PolicyConfig) and decides what a failed head lookup means.
#pragma once

#include <string_view>

#include "ray_webhook/core/model/admission_request.h"
#include "ray_webhook/core/model/decision.h"
#include "ray_webhook/core/model/head_pods.h"
#include "ray_webhook/core/model/policy_config.h"

namespace ray_webhook {

enum class Endpoint { kMutate, kValidate, kAdmit };

// The HTTP path an endpoint is served on, as logs and metrics name it.
constexpr std::string_view EndpointPath(Endpoint endpoint) {
  switch (endpoint) {
    case Endpoint::kMutate: return "/mutate";
    case Endpoint::kValidate: return "/validate";
    case Endpoint::kAdmit: return "/admit";
  }
  return "/validate";
}

// True when Decide needs the cluster's head Pods: /validate or /admit of a
// head Pod CREATE with the lookup on. The edge asks only when it has an API to ask.
bool NeedsHeadLookup(const AdmissionRequest& request, Endpoint endpoint, const PolicyConfig& policy);

// head_pods: the lookup's result when NeedsHeadLookup and the edge asked, else nullptr.
Decision Decide(const AdmissionRequest& request, Endpoint endpoint, const PolicyConfig& policy,
                const HeadPodList* head_pods = nullptr);

}  // namespace ray_webhook
