// Refusal: why a request is answered with an error instead of being served,
// and the one HTTP status that says so.
//
// Contract: every error answer of the server is a Refusal, whoever finds it:
// the framing (411, 413, 414, 415, 417, 431, 505, 400), the byte budget
// (503), the routing (404, 405 with the methods allowed) or a handler that
// failed (500). AnswerOf turns it into an answer whose body is a Kubernetes
// Status naming the status's reason, as kube-apiserver and controller-runtime
// answer errors, so a client reads every refusal the same way.
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "ray_webhook/http/answer_writer.h"

namespace ray_webhook {

struct Refusal {
  Refusal() = default;
  Refusal(int s, std::string m, std::string_view a = {}) : status(s), message(std::move(m)), allow(a) {}

  int status = 0;  // 0: no refusal
  std::string message;
  // For 405: the methods the path takes, e.g. "GET, HEAD".
  std::string_view allow;

  explicit operator bool() const { return status != 0; }
};

// The Status reason of an HTTP status, as Kubernetes names it ("NotFound").
std::string_view StatusReasonOf(int status);

// The answer to a refusal: a JSON Status body; a 503 asks to retry in a second.
HttpAnswer AnswerOf(const Refusal& refusal);

}  // namespace ray_webhook
