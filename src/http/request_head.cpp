#include "ray_webhook/http/request_head.h"

#include <cstring>

namespace ray_webhook {
namespace {

char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

// RFC 9110 section 5.6.2: token characters.
bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (c <= 32 || c >= 127) return false;
    if (std::strchr("\"(),/:;<=>?@[\\]{}", c) != nullptr) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whether a comma-separated header value lists `token` (any case).
bool ListsToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const std::size_t comma = value.find(',');
    if (EqualsIgnoreCase(Trim(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

bool Refuse(Refusal* refusal, int status, std::string message) {
  refusal->status = status;
  refusal->message = std::move(message);
  return false;
}

}  // namespace

HeadScanner::State HeadScanner::Scan(std::string_view buffered, const HeadLimits& limits) {
  if (refusal_.status != 0) return State::kRefused;
  if (head_bytes_ != 0) return State::kComplete;
  auto refuse = [this](int status, std::string message) {
    refusal_.status = status;
    refusal_.message = std::move(message);
    return State::kRefused;
  };
  auto line_too_long = [&] {
    return lines_ == 0 ? refuse(414, "the request line exceeds " + std::to_string(limits.max_line_bytes) + " bytes")
                       : refuse(431, "a header line exceeds " + std::to_string(limits.max_line_bytes) + " bytes");
  };
  while (scanned_ < buffered.size()) {
    const void* nl = std::memchr(buffered.data() + scanned_, '\n', buffered.size() - scanned_);
    if (nl == nullptr) {
      scanned_ = buffered.size();
      break;
    }
    const std::size_t end = static_cast<std::size_t>(static_cast<const char*>(nl) - buffered.data());
    std::size_t length = end - line_start_;
    if (length > 0 && buffered[end - 1] == '\r') --length;
    scanned_ = end + 1;
    if (length > limits.max_line_bytes) return line_too_long();
    if (length == 0) {
      if (lines_ == 0) return refuse(400, "the request does not start with a request line");
      head_bytes_ = scanned_;
      if (head_bytes_ > limits.max_head_bytes) {
        return refuse(431, "the request head exceeds " + std::to_string(limits.max_head_bytes) + " bytes");
      }
      return State::kComplete;
    }
    if (++lines_ > limits.max_header_lines + 1) {
      return refuse(431, "the request has more than " + std::to_string(limits.max_header_lines) + " header lines");
    }
    line_start_ = scanned_;
  }
  if (scanned_ - line_start_ > limits.max_line_bytes + 1) return line_too_long();
  if (scanned_ > limits.max_head_bytes) {
    return refuse(431, "the request head exceeds " + std::to_string(limits.max_head_bytes) + " bytes");
  }
  return State::kNeedMore;
}

HeadPlacement PlacementOf(const RequestHead& head, const char* buffer) {
  // An empty view may point anywhere (or nowhere): it stays empty.
  const auto at = [buffer](std::string_view v) { return v.empty() ? 0 : static_cast<std::size_t>(v.data() - buffer); };
  return {at(head.method), at(head.target), at(head.path), at(head.content_type)};
}

void PlaceAt(RequestHead* head, const HeadPlacement& at, const char* buffer) {
  const auto moved = [buffer](std::string_view v, std::size_t offset) {
    return v.empty() ? v : std::string_view(buffer + offset, v.size());
  };
  head->method = moved(head->method, at.method);
  head->target = moved(head->target, at.target);
  head->path = moved(head->path, at.path);
  head->content_type = moved(head->content_type, at.content_type);
}

bool ParseRequestHead(std::string_view head, const HeadLimits& limits, RequestHead* out, Refusal* refusal) {
  *out = RequestHead();
  auto next_line = [&head]() {
    const std::size_t nl = head.find('\n');
    std::string_view line = head.substr(0, nl);
    head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  };

  const std::string_view request_line = next_line();
  const std::size_t sp1 = request_line.find(' ');
  const std::size_t sp2 = sp1 == std::string_view::npos ? sp1 : request_line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || request_line.find(' ', sp2 + 1) != std::string_view::npos) {
    return Refuse(refusal, 400, "the request line is not METHOD TARGET VERSION");
  }
  out->method = request_line.substr(0, sp1);
  out->target = request_line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = request_line.substr(sp2 + 1);
  if (!IsToken(out->method)) return Refuse(refusal, 400, "the request method is not a token");
  if (out->target.empty() || out->target.front() != '/') {
    return Refuse(refusal, 400, "the request target must be a path starting with /");
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    return Refuse(refusal, 505, "only HTTP/1.1 and HTTP/1.0 are served");
  }
  out->path = out->target.substr(0, out->target.find('?'));

  bool has_length = false;
  bool keep_alive_10 = false;
  for (std::string_view line = next_line(); !line.empty(); line = next_line()) {
    if (line.front() == ' ' || line.front() == '\t') {
      return Refuse(refusal, 400, "folded header lines are not accepted");
    }
    const std::size_t colon = line.find(':');
    const std::string_view name = line.substr(0, colon);
    if (colon == std::string_view::npos || !IsToken(name)) {
      return Refuse(refusal, 400, "a header line is not NAME: VALUE");
    }
    const std::string_view value = Trim(line.substr(colon + 1));
    if (EqualsIgnoreCase(name, "content-length")) {
      std::size_t n = 0;
      if (value.empty() || value.size() > 18) return Refuse(refusal, 400, "Content-Length is not a byte count");
      for (char c : value) {
        if (c < '0' || c > '9') return Refuse(refusal, 400, "Content-Length is not a byte count");
        n = n * 10 + static_cast<std::size_t>(c - '0');
      }
      if (has_length && n != out->content_length) {
        return Refuse(refusal, 400, "the request has two different Content-Length headers");
      }
      has_length = true;
      out->content_length = n;
    } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
      return Refuse(refusal, 411, "Transfer-Encoding is not accepted on requests; send the body with a Content-Length");
    } else if (EqualsIgnoreCase(name, "content-encoding")) {
      if (!EqualsIgnoreCase(value, "identity")) {
        return Refuse(refusal, 415, "Content-Encoding is not accepted on requests; send the body uncompressed");
      }
    } else if (EqualsIgnoreCase(name, "expect")) {
      if (!EqualsIgnoreCase(value, "100-continue")) return Refuse(refusal, 417, "only Expect: 100-continue is served");
      out->expect_continue = true;
    } else if (EqualsIgnoreCase(name, "connection")) {
      if (ListsToken(value, "close")) out->wants_close = true;
      if (ListsToken(value, "keep-alive")) keep_alive_10 = true;
    } else if (EqualsIgnoreCase(name, "content-type")) {
      out->content_type = value;
    }
  }
  if (version == "HTTP/1.0" && !keep_alive_10) out->wants_close = true;
  if (!has_length && (out->method == "POST" || out->method == "PUT" || out->method == "PATCH")) {
    return Refuse(refusal, 411, "a " + std::string(out->method) + " request needs a Content-Length");
  }
  if (out->content_length > limits.max_body_bytes) {
    return Refuse(refusal, 413, "request body exceeds " + std::to_string(limits.max_body_bytes) + " bytes");
  }
  return true;
}

}  // namespace ray_webhook
