#include "ray_webhook/kube/https_get.h"

#include <arpa/inet.h>

#include <charconv>
#include <memory>

#include "https_connection.h"

namespace ray_webhook {
namespace {

using Clock = std::chrono::steady_clock;

enum class Parse { kIncomplete, kDone, kBad };

// Decodes a chunked body; kIncomplete until its last chunk and trailers are in.
Parse Dechunk(std::string_view in, std::string* out) {
  out->clear();
  for (;;) {
    const std::size_t eol = in.find("\r\n");
    if (eol == std::string_view::npos) return Parse::kIncomplete;
    std::string_view size_line = in.substr(0, eol);
    size_line = size_line.substr(0, size_line.find(';'));
    std::size_t size = 0;
    if (size_line.empty() ||
        std::from_chars(size_line.data(), size_line.data() + size_line.size(), size, 16).ec != std::errc()) {
      return Parse::kBad;
    }
    in.remove_prefix(eol + 2);
    if (size == 0) return in.find("\r\n") == std::string_view::npos ? Parse::kIncomplete : Parse::kDone;
    if (in.size() < size + 2) return Parse::kIncomplete;
    out->append(in.substr(0, size));
    in.remove_prefix(size + 2);
  }
}

// Reads the answer in raw; kDone once it is whole.
Parse ReadAnswer(const std::string& raw, bool closed, HttpsAnswer* answer) {
  const std::size_t head_end = raw.find("\r\n\r\n");
  if (head_end == std::string::npos) return closed ? Parse::kBad : Parse::kIncomplete;
  const std::optional<AnswerHead> head = ParseAnswerHead(std::string_view(raw.data(), head_end));
  if (!head) return Parse::kBad;
  const std::string_view body(raw.data() + head_end + 4, raw.size() - head_end - 4);
  answer->status = head->status;
  if (head->chunked) {
    const Parse p = Dechunk(body, &answer->body);
    return p == Parse::kIncomplete && closed ? Parse::kBad : p;
  }
  if (head->content_length) {
    if (body.size() < *head->content_length) return closed ? Parse::kBad : Parse::kIncomplete;
    answer->body.assign(body.substr(0, *head->content_length));
    return Parse::kDone;
  }
  if (!closed) return Parse::kIncomplete;
  answer->body.assign(body);
  return Parse::kDone;
}

}  // namespace

std::optional<HttpsTarget> ParseHttpsUrl(std::string_view url) {
  constexpr std::string_view kScheme = "https://";
  if (!url.starts_with(kScheme)) return std::nullopt;
  url.remove_prefix(kScheme.size());
  if (url.ends_with("/")) url.remove_suffix(1);
  HttpsTarget t;
  std::string_view port;
  if (url.starts_with("[")) {
    const std::size_t close = url.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    t.host = std::string(url.substr(1, close - 1));
    in6_addr a;
    if (inet_pton(AF_INET6, t.host.c_str(), &a) != 1) return std::nullopt;
    url.remove_prefix(close + 1);
    if (!url.empty()) {
      if (url.front() != ':') return std::nullopt;
      port = url.substr(1);
    }
  } else {
    const std::size_t colon = url.find(':');
    t.host = std::string(url.substr(0, colon));
    if (colon != std::string_view::npos) port = url.substr(colon + 1);
  }
  if (t.host.empty() || t.host.find_first_of("/?#@ ") != std::string::npos) return std::nullopt;
  if (!port.empty() || url.ends_with(":")) {
    int p = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || end != port.data() + port.size() || p < 1 || p > 65535) return std::nullopt;
    t.port = p;
  }
  return t;
}

Result<HttpsAnswer> HttpsRequest(const HttpsTarget& target, std::string_view method, std::string_view path,
                                 const HttpHeaders& headers, std::string_view body, const std::string& ca_file,
                                 Clock::time_point deadline, std::size_t max_answer_bytes) {
  Result<std::unique_ptr<HttpsConnection>> connection =
      HttpsConnection::Open(target, method, path, headers, body, ca_file, deadline);
  if (!connection.ok()) return connection.status();
  HttpsAnswer answer;
  std::string raw;
  char buf[16384];
  for (;;) {
    const int n = (*connection)->Read(buf, sizeof buf, deadline);
    if (n == HttpsConnection::kTimedOut) {
      return Status::Error("timed out waiting for the answer");
    }
    if (n > 0) raw.append(buf, static_cast<std::size_t>(n));
    if (raw.size() > max_answer_bytes) {
      return Status::Error("the answer exceeds " + std::to_string(max_answer_bytes) + " bytes");
    }
    const Parse p = ReadAnswer(raw, n <= 0, &answer);
    if (p == Parse::kDone) return answer;
    if (p == Parse::kBad || n <= 0) {
      return Status::Error(raw.empty() ? "the connection closed without an answer"
                                       : "the answer is not a complete HTTP answer");
    }
  }
}

}  // namespace ray_webhook
