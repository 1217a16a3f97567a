// HttpsConnection: one verified TLS connection with one request written on
// it, the single path by which the kube layer reaches an HTTPS server (the
// whole answers of HttpsRequest and the streamed ones of HttpsStreamLines).
//
// Contract: Open() connects to the target (an IPv4 or IPv6 literal, or a
// name), verifies the server's certificate against ca_file (the system's CAs
// when empty) and its name or IP address, and writes the request with
// Connection: close, every wait bounded by the deadline; a failure is an error
// with a one-line reason. A stop predicate, when given, is asked every 200 ms
// of every wait, and ends the attempt as a timeout would. Read() then returns what has arrived, waiting no
// later than `until`. Internal to the kube layer; one connection serves one
// thread. Never throws.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include "ray_webhook/core/model/status.h"
#include "ray_webhook/kube/https_get.h"

namespace ray_webhook {

class HttpsConnection {
 public:
  using Clock = std::chrono::steady_clock;

  static Result<std::unique_ptr<HttpsConnection>> Open(const HttpsTarget& target, std::string_view method,
                                                       std::string_view path, const HttpHeaders& headers,
                                                       std::string_view body, const std::string& ca_file,
                                                       Clock::time_point deadline,
                                                       const std::function<bool()>& stop = {});
  ~HttpsConnection();
  HttpsConnection(const HttpsConnection&) = delete;
  HttpsConnection& operator=(const HttpsConnection&) = delete;

  // Bytes read into buf (> 0), kClosed when the peer closed (with or without
  // close_notify: OpenSSL 3 reports the latter as an error, and the answer
  // read so far may still be whole), or kTimedOut when nothing came by until.
  static constexpr int kClosed = 0;
  static constexpr int kTimedOut = -2;
  int Read(char* buf, std::size_t size, Clock::time_point until);

 private:
  HttpsConnection() = default;
  struct Handles;
  std::unique_ptr<Handles> handles_;
};

// The head of an HTTP/1.x answer: its status and how its body is framed.
struct AnswerHead {
  int status = 0;
  std::optional<std::size_t> content_length;
  bool chunked = false;
};

// Reads the status line and headers (the text before the blank line); nullopt
// when they are not an HTTP/1.x answer's.
std::optional<AnswerHead> ParseAnswerHead(std::string_view head);

}  // namespace ray_webhook
