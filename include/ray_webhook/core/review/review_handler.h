// ReviewHandler: decode -> decide -> encode for one HTTP body, in one step
// or, when the decision needs a fact from the cluster, in two.
//
// Contract: PrepareReview takes the raw body of POST /mutate or /validate,
// decodes it once and, unless PodPolicy needs the RayCluster's head Pods,
// decides and encodes it: the review is then done(). Otherwise it stops
// before deciding and says which lookup it waits for (heads_wanted()); the
// caller runs that lookup wherever it may wait and hands the result to
// Finish(), which decides on the request decoded in the first step. The
// answer is always one: 200 with an AdmissionReview, or 400 with a Status
// body saying what is wrong with the input. Never throws and does no I/O:
// the core never waits, so it never needs to know on which thread it runs.
// A prepared review holds views into its decoder and its body: both must
// stay untouched until it is finished. HandleReview runs both steps for a
// caller that may wait (the command line, tests).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "ray_webhook/core/decode/review_decoder.h"
#include "ray_webhook/core/model/decision.h"
#include "ray_webhook/core/model/head_pods.h"
#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/core/review/pod_policy.h"

namespace ray_webhook {

struct ReviewOutcome {
  int http_status = 200;
  std::string body;
  Decision decision;
  // For one log line. Views into the decoder's buffer: valid until its next Decode.
  std::string_view uid;
  std::string_view namespace_name;
  std::string_view pod_name;  // AdmissionRequest::PodName
  std::string_view cluster;
  bool looked_up_heads = false;
  std::string error;  // why the body was refused, when http_status != 200
};

// The lookup a review waits for: the head Pods of RayCluster `cluster` in
// `namespace_name`. Views into the decoder's buffer, like the outcome's.
struct HeadQuery {
  std::string_view namespace_name;
  std::string_view cluster;
};

class PreparedReview {
 public:
  // True when outcome() is the answer; false while the decision waits for heads_wanted().
  bool done() const { return !wanted_.has_value(); }
  // Valid only while !done().
  const HeadQuery& heads_wanted() const { return *wanted_; }
  // The second step, once: decides with the lookup's result (or the error
  // that says why there is none) and encodes the answer. Then done().
  void Finish(const HeadPodList& heads);

  ReviewOutcome& outcome() { return outcome_; }
  const ReviewOutcome& outcome() const { return outcome_; }

 private:
  friend PreparedReview PrepareReview(std::string_view, Endpoint, const PolicyConfig&, ReviewDecoder&, bool,
                                      std::size_t);
  void Decide(const HeadPodList* heads);

  ReviewOutcome outcome_;
  std::optional<HeadQuery> wanted_;
  // The first step's decoded request, owned by the decoder.
  const AdmissionRequest* request_ = nullptr;
  Endpoint endpoint_ = Endpoint::kMutate;
  const PolicyConfig* policy_ = nullptr;
};

// can_look_up: the caller has a way to list head Pods; without one a review
// that would need them is decided without, as PodPolicy defines.
// body_padding: see ReviewDecoder::Decode. policy must outlive the review.
PreparedReview PrepareReview(std::string_view body, Endpoint endpoint, const PolicyConfig& policy,
                             ReviewDecoder& decoder, bool can_look_up, std::size_t body_padding = 0);
// A temporary policy would be gone before Finish() reads it.
PreparedReview PrepareReview(std::string_view body, Endpoint endpoint, const PolicyConfig&& policy,
                             ReviewDecoder& decoder, bool can_look_up, std::size_t body_padding = 0) = delete;

// Lists the head Pods of RayCluster `cluster` in `namespace_name`.
using HeadLookup = std::function<HeadPodList(std::string_view namespace_name, std::string_view cluster)>;

// Both steps at once, calling lookup in between when the review needs it.
ReviewOutcome HandleReview(std::string_view body, Endpoint endpoint, const PolicyConfig& policy, ReviewDecoder& decoder,
                           const HeadLookup& lookup = {}, std::size_t body_padding = 0);

}  // namespace ray_webhook
