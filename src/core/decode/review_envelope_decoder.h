// DecodeReviewEnvelope: an AdmissionReview body into the request's fields,
// with request.object (and request.oldObject) handed to the object decoder
// that request.kind names.
//
// Contract: checks the envelope (apiVersion admission.k8s.io/v1 or v1beta1,
// kind AdmissionReview, a request with a uid) and fills req: its uid, kind,
// operation, namespace and name; pod for a core/v1 Pod (pod_decoder.h);
// ray_object for a ray.io kind (ray_object_decoder.h), and old_ray_object
// when oldObject reads (one that does not is as good as none). Object errors
// come out at absolute paths ("request.object.spec..."). One pass, front to
// back, in document order: an object before request.kind is read as a Pod,
// and counts only if the kind then says Pod; a ray.io object must come after
// its kind, as kube-apiserver sends it. Refills req in place: the previous
// Pod's storage is moved to spare_pod and back, so a review like the last
// one allocates nothing. On failure, a one-line message fit for an HTTP 400
// answer, and req is left unspecified.
#pragma once

#include <cstddef>
#include <string_view>

#include "ray_webhook/core/json/json_parser.h"
#include "ray_webhook/core/model/admission_request.h"
#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

Status DecodeReviewEnvelope(JsonParser& parser, std::string_view body, std::size_t readable_padding,
                            AdmissionRequest& req, Pod& spare_pod);

}  // namespace ray_webhook
