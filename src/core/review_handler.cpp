#include "ray_webhook/core/review_handler.h"

#include "ray_webhook/core/admission_response.h"
#include "ray_webhook/core/ray_pod.h"

namespace ray_webhook {

ReviewOutcome HandleReview(std::string_view body, Endpoint endpoint, const PolicyConfig& policy, ReviewDecoder& decoder,
                           const HeadLookup& lookup, std::size_t body_padding) {
  ReviewOutcome out;
  Result<const AdmissionRequest*> decoded = decoder.Decode(body, body_padding);
  if (!decoded.ok()) {
    out.http_status = 400;
    out.error = decoded.error();
    out.body = EncodeErrorStatus(400, "BadRequest", out.error);
    return out;
  }
  const AdmissionRequest& request = **decoded;
  out.uid = request.uid;
  out.namespace_name = request.namespace_name;
  out.pod_name = request.PodName();
  if (request.pod) out.cluster = Lookup(request.pod->metadata.labels, kClusterLabel).value_or("");
  if (request.ray_object && request.ray_object->kind == RayObjectKind::kRayCluster) out.cluster = out.pod_name;
  std::optional<HeadPodList> heads;
  if (lookup && NeedsHeadLookup(request, endpoint, policy)) {
    heads = lookup(request.PodNamespace(), out.cluster);
    out.looked_up_heads = true;
  }
  out.decision = Decide(request, endpoint, policy, heads ? &*heads : nullptr);
  out.body = EncodeAdmissionResponse(request, out.decision);
  return out;
}

}  // namespace ray_webhook
