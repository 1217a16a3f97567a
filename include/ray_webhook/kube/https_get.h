// HttpsRequest: one HTTPS request (a GET, or any method with a body) whose
// whole call, from connect to the last byte of the answer, ends by a deadline.
//
// Contract: connects to the target (an IPv4 or IPv6 literal, or a name),
// verifies the server's certificate against ca_file (the system's CAs when
// empty) and its name or IP address, sends the request with Connection:
// close, and reads the answer (Content-Length, chunked, or to the close),
// refusing one over max_answer_bytes. Every wait is a poll bounded by what is
// left until the deadline, so a server that accepts and then trickles bytes
// cannot hold the caller past it. Never throws: a failure is an error Result
// with a one-line reason. Name resolution is not bounded (in a cluster the API is
// an IP address). Thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

struct HttpsTarget {
  std::string host;  // an IPv6 literal without its brackets
  int port = 443;
};

// "https://host", "https://host:port", "https://[v6 literal]:port"; a
// trailing "/" is allowed, nothing else after the authority.
std::optional<HttpsTarget> ParseHttpsUrl(std::string_view url);

struct HttpsAnswer {
  int status = 0;
  std::string body;
};

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

// METHOD of PATH, sending BODY with its Content-Length (none for a GET
// without a body).
Result<HttpsAnswer> HttpsRequest(const HttpsTarget& target, std::string_view method, std::string_view path,
                                 const HttpHeaders& headers, std::string_view body, const std::string& ca_file,
                                 std::chrono::steady_clock::time_point deadline, std::size_t max_answer_bytes);

}  // namespace ray_webhook
