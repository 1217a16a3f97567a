// WriteAnswer: the one place where the bytes of an HTTP answer are written.
//
// Contract: an HttpAnswer is what a handler or a refusal decided (status,
// content type, body, the few headers the server sends); AnswerFraming is
// what the connection decided before writing: whether this answer closes it
// and whether the request was HEAD. WriteAnswer appends status line, headers
// and body in one go and never revisits them: whether an answer closes its
// connection is settled before its first byte is written. Headers come in the
// order cpp-httplib 0.11 sorts them (case-insensitively), which clients and
// tests saw before the server wrote its own answers. WriteContinue writes the
// interim 100 Continue, the only response that is not an answer.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ray_webhook {

struct HttpAnswer {
  int status = 200;
  // A string with static storage: "application/json", "text/plain", ...
  std::string_view content_type = "application/json";
  std::string body;
  std::string_view allow;       // Allow, for a 405
  int retry_after_seconds = 0;  // Retry-After when > 0
};

struct AnswerFraming {
  bool close = false;      // Connection: close, else Keep-Alive
  bool head_only = false;  // HEAD: the headers of the answer a GET would get, no body
  long keep_alive_seconds = 30;
  std::size_t keep_alive_max = 100000;
};

void WriteAnswer(const HttpAnswer& answer, const AnswerFraming& framing, std::string* out);

void WriteContinue(std::string* out);

// The RFC 9110 reason phrase of a status the server answers with.
std::string_view ReasonPhraseOf(int status);

}  // namespace ray_webhook
