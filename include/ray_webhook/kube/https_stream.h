// HttpsStreamLines: one HTTPS GET whose answer is read as it arrives, line by
// line: a Kubernetes watch, whose newline-delimited events come for as long
// as the server keeps the answer open.
//
// Contract: connects, verifies and sends as HttpsRequest does (the same code),
// all of it and the answer's head within connect_timeout. A 200 answer's body
// is then handed to on_line one complete line at a time (chunked transfer
// coding undone; no "\n"; empty lines skipped), each as soon as its newline
// arrives. It ends, saying how, when the answer ends (the last chunk, or the
// close of a body without framing), when no byte came for idle_timeout, at
// the overall deadline, when a line would exceed max_line_bytes (refused
// before it is held), when on_line returns an error, or when stop() says so;
// stop is asked at least every stop_check once the request is sent, and every
// 200 ms while connecting, so a shutdown is prompt. Any other
// status comes back with its body, bounded by max_error_body_bytes. Not a
// Result: each ending asks its caller for a different next step (watch again,
// back off, list again), so the ending is a value, with a one-line reason.
// Never throws. Thread-safe (each call has its own connection).
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/status.h"
#include "ray_webhook/kube/https_get.h"

namespace ray_webhook {

struct StreamLimits {
  std::chrono::milliseconds connect_timeout{10000};
  std::chrono::milliseconds idle_timeout{60000};
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::size_t max_line_bytes = 16 * 1024 * 1024;
  std::size_t max_error_body_bytes = 64 * 1024;
  std::chrono::milliseconds stop_check{200};
};

struct StreamEnd {
  enum class How {
    kEnded,        // the answer ended as HTTP frames it
    kAnswered,     // a status other than 200: status and body
    kStopped,      // stop() said so
    kIdle,         // no byte for idle_timeout
    kDeadline,     // the overall deadline passed
    kLineTooLong,  // a line over max_line_bytes
    kRefused,      // on_line returned an error (reason is its message)
    kBroken,       // no connection, TLS, no answer head, bad framing, a close mid-answer
  };
  How how = How::kBroken;
  int status = 0;
  std::string body;
  std::string reason;  // one line; empty for kEnded
};

using StreamLineSink = std::function<Status(std::string_view line)>;

StreamEnd HttpsStreamLines(const HttpsTarget& target, std::string_view path, const HttpHeaders& headers,
                           const std::string& ca_file, const StreamLimits& limits, const StreamLineSink& on_line,
                           const std::function<bool()>& stop = {});

}  // namespace ray_webhook
