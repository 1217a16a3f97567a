// ReviewHandler: decode -> decide -> encode for one HTTP body.
//
// Contract: takes the raw body of POST /mutate or /validate and always
// returns an answer: 200 with an AdmissionReview, or 400 with a Status body
// saying what is wrong with the input. Never throws and does no I/O itself:
// the one cluster fact a rule may need, the RayCluster's head Pods, comes
// from the injected lookup, called only when PodPolicy needs it. The server
// adds transport, logging and metrics around it.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "ray_webhook/core/decision.h"
#include "ray_webhook/core/pod_policy.h"
#include "ray_webhook/core/policy_config.h"
#include "ray_webhook/core/review_decoder.h"

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

// Lists the head Pods of RayCluster `cluster` in `namespace_name`.
using HeadLookup = std::function<HeadPodList(std::string_view namespace_name, std::string_view cluster)>;

// body_padding: see ReviewDecoder::Decode.
ReviewOutcome HandleReview(std::string_view body, Endpoint endpoint, const PolicyConfig& policy, ReviewDecoder& decoder,
                           const HeadLookup& lookup = {}, std::size_t body_padding = 0);

}  // namespace ray_webhook
