#include "ray_webhook/review_handler.h"

#include "ray_webhook/admission_response.h"
#include "ray_webhook/ray_pod.h"

namespace ray_webhook {

ReviewOutcome HandleReview(std::string_view body, Endpoint endpoint, const Config& config, ReviewDecoder& decoder,
                           const HeadLookup& lookup, std::size_t body_padding) {
  ReviewOutcome out;
  DecodeResult decoded = decoder.Decode(body, body_padding);
  if (!decoded.request) {
    out.http_status = 400;
    out.error = std::move(decoded.error);
    out.body = EncodeErrorStatus(400, "BadRequest", out.error);
    return out;
  }
  const AdmissionRequest& request = *decoded.request;
  out.uid = request.uid;
  out.namespace_name = request.namespace_name;
  if (request.pod) {
    const ObjectMeta& meta = request.pod->metadata;
    out.pod_name = meta.name.empty() ? meta.generate_name : meta.name;
    out.cluster = Lookup(meta.labels, kClusterLabel).value_or("");
  }
  std::optional<PodListResult> heads;
  if (lookup && NeedsHeadLookup(request, endpoint, config)) {
    heads = lookup(request.PodNamespace(), out.cluster);
    out.looked_up_heads = true;
  }
  out.decision = Decide(request, endpoint, config, heads ? &*heads : nullptr);
  out.body = EncodeAdmissionResponse(request, out.decision);
  return out;
}

}  // namespace ray_webhook
