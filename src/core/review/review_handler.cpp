#include "ray_webhook/core/review/review_handler.h"

#include <cassert>

#include "ray_webhook/core/pod/ray_pod.h"
#include "ray_webhook/core/review/admission_response.h"

namespace ray_webhook {

PreparedReview PrepareReview(std::string_view body, Endpoint endpoint, const PolicyConfig& policy,
                             ReviewDecoder& decoder, bool can_look_up, std::size_t body_padding) {
  PreparedReview review;
  ReviewOutcome& out = review.outcome_;
  Result<const AdmissionRequest*> decoded = decoder.Decode(body, body_padding);
  if (!decoded.ok()) {
    out.http_status = 400;
    out.error = decoded.error();
    out.body = EncodeErrorStatus(400, "BadRequest", out.error);
    return review;
  }
  const AdmissionRequest& request = **decoded;
  review.request_ = &request;
  review.endpoint_ = endpoint;
  review.policy_ = &policy;
  out.uid = request.uid;
  out.namespace_name = request.namespace_name;
  out.pod_name = request.PodName();
  if (request.pod) out.cluster = Lookup(request.pod->metadata.labels, kClusterLabel).value_or("");
  if (request.ray_object && request.ray_object->kind == RayObjectKind::kRayCluster) out.cluster = out.pod_name;
  if (can_look_up && NeedsHeadLookup(request, endpoint, policy)) {
    // Stops here: the caller looks the heads up where it may wait.
    review.wanted_ = HeadQuery{request.PodNamespace(), out.cluster};
    return review;
  }
  review.Decide(nullptr);
  return review;
}

void PreparedReview::Finish(const HeadPodList& heads) {
  assert(!done());
  wanted_.reset();
  outcome_.looked_up_heads = true;
  Decide(&heads);
}

void PreparedReview::Decide(const HeadPodList* heads) {
  outcome_.decision = ray_webhook::Decide(*request_, endpoint_, *policy_, heads);
  outcome_.body = EncodeAdmissionResponse(*request_, outcome_.decision);
}

ReviewOutcome HandleReview(std::string_view body, Endpoint endpoint, const PolicyConfig& policy, ReviewDecoder& decoder,
                           const HeadLookup& lookup, std::size_t body_padding) {
  PreparedReview review = PrepareReview(body, endpoint, policy, decoder, static_cast<bool>(lookup), body_padding);
  if (!review.done()) review.Finish(lookup(review.heads_wanted().namespace_name, review.heads_wanted().cluster));
  return std::move(review.outcome());
}

}  // namespace ray_webhook
