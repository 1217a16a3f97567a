// ReviewPath: POST /mutate and /validate, from a framed request to its answer.
//
// Contract: Review() runs on the event loop that framed the request, which
// must never wait: it leases a decoder, counts the request in flight and
// prepares the review (PrepareReview). A review that needs no cluster fact
// is answered at once. One that needs the second-head lookup comes back as a
// Deferred holding the decoder lease and the prepared review: on a blocking
// worker it lists the heads within LookupDeadline (the request's ?timeout=
// and --kube-api-timeout) and finishes the review, without decoding it
// again. Either way the answer is counted (Metrics), logged (one review line,
// or a warning for a refused body) and timed from the start of Review. The
// Deferred never throws: a failure is a 500 for that request alone.
#pragma once

#include <chrono>
#include <string_view>

#include "ray_webhook/core/decode/review_decoder_pool.h"
#include "ray_webhook/core/review/review_handler.h"
#include "ray_webhook/http/http_handler.h"
#include "ray_webhook/kube/kube_api_client.h"
#include "ray_webhook/server/current_policy.h"
#include "ray_webhook/server/metrics.h"

namespace ray_webhook {

class ReviewPath {
 public:
  using Clock = std::chrono::steady_clock;

  // kube: null when no Kubernetes API is configured (no lookup is made).
  // Every argument must outlive the path and the Deferreds it hands out.
  // Each review is decided under the policy in force when it starts (CurrentPolicy::Get).
  ReviewPath(const CurrentPolicy& policy, ReviewDecoderPool& decoders, Metrics& metrics, KubeApiClient* kube,
             std::chrono::milliseconds kube_timeout)
      : policy_(policy), decoders_(decoders), metrics_(metrics), kube_(kube), kube_timeout_(kube_timeout) {}

  Handled Review(const HttpRequest& request, Endpoint endpoint);

 private:
  class LookupStep;

  HeadPodList LookUpHeads(const HeadQuery& query, std::chrono::milliseconds deadline);
  HttpAnswer Finish(ReviewOutcome& out, Endpoint endpoint, std::string_view remote, Clock::time_point start);

  const CurrentPolicy& policy_;
  ReviewDecoderPool& decoders_;
  Metrics& metrics_;
  KubeApiClient* const kube_;
  const std::chrono::milliseconds kube_timeout_;
};

// A handler that threw: a 500 for this request alone, and an error line naming the path.
HttpAnswer HandlerFailed(std::string_view path, std::string_view what);

}  // namespace ray_webhook
