// FqdnMutation: point a Ray Pod at its head through the fully qualified name.
//
// Contract: appends to `decision` the operations that give
//  - the worker Ray container env FQ_RAY_IP=<fqdn> and RAY_IP=<svc> (each only
//    when no entry of that name exists), every `--address` at the bare head
//    service in its command and args, and a bare RAY_ADDRESS, the FQDN;
//  - the worker Ray container's KUBERAY_GEN_RAY_START_CMD rewritten as the
//    command or args that carry its text, so that the text still occurs in
//    them as often as before (KubeRay 1.8's Pod webhook looks for it in args[0]);
//  - every init container, head or worker, FQ_RAY_IP and RAY_IP as above;
// and nothing else: the head Ray container reaches GCS on localhost and other
// containers are the user's. Applying the result and running again yields no
// operations (reinvocationPolicy: IfNeeded may call a webhook twice).
#pragma once

#include <string_view>

#include "ray_webhook/core/model/admission_request.h"
#include "ray_webhook/core/model/decision.h"
#include "ray_webhook/core/pod/ray_pod.h"

namespace ray_webhook {

void PlanFqdnMutation(const Pod& pod, const RayPodIdentity& identity, std::string_view namespace_name,
                      std::string_view cluster_domain, Decision& decision);

}  // namespace ray_webhook
