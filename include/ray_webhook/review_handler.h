// ReviewHandler: decode -> decide -> encode for one HTTP body.
//
// Contract: takes the raw body of POST /mutate or /validate and always
// returns an answer: 200 with an AdmissionReview, or 400 with a Status body
// saying what is wrong with the input. Never throws and does no I/O; the
// server adds transport, logging and metrics around it.
#pragma once

#include <string>
#include <string_view>

#include "ray_webhook/config.h"
#include "ray_webhook/decision.h"
#include "ray_webhook/pod_policy.h"
#include "ray_webhook/review_decoder.h"

namespace ray_webhook {

struct ReviewOutcome {
  int http_status = 200;
  std::string body;
  Decision decision;
  // For one log line. Views into the decoder's buffer: valid until its next Decode.
  std::string_view uid;
  std::string_view namespace_name;
  std::string_view pod_name;  // metadata.name, else generateName
  std::string_view cluster;
  std::string error;  // why the body was refused, when http_status != 200
};

ReviewOutcome HandleReview(std::string_view body, Endpoint endpoint, const Config& config, ReviewDecoder& decoder);

}  // namespace ray_webhook
