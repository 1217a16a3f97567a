// Encodes the AdmissionReview answer kube-apiserver expects.
//
// Contract (kube-apiserver request/admissionreview.go VerifyAdmissionResponse):
// same apiVersion and kind as the request, response.uid echoed, and patch and
// patchType together or not at all. A denial carries status.code >= 400 and a
// message. The body is compact JSON; it never throws.
#pragma once

#include <string>
#include <string_view>

#include "ray_webhook/core/model/admission_request.h"
#include "ray_webhook/core/model/decision.h"

namespace ray_webhook {

std::string EncodeAdmissionResponse(const AdmissionRequest& request, const Decision& decision);

// A metav1.Status-shaped body for requests that are not AdmissionReviews at all.
std::string EncodeErrorStatus(int http_code, std::string_view reason, std::string_view message);

}  // namespace ray_webhook
