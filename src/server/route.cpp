#include "ray_webhook/server/route.h"

#include <cctype>

namespace ray_webhook {
namespace {

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Decoded(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size()) {
      const int hi = HexValue(text[i + 1]), lo = HexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && text[i] == '+' ? ' ' : text[i]);
  }
  return out;
}

}  // namespace

std::string DecodedPath(std::string_view path) {
  if (path.find('%') == std::string_view::npos) return std::string(path);
  return Decoded(path, false);
}

bool IsJsonContentType(std::string_view value) {
  constexpr std::string_view kType = "application/json";
  std::string_view media = value.substr(0, value.find(';'));
  const auto first = media.find_first_not_of(' ');
  if (first == std::string_view::npos) return false;
  media = media.substr(first, media.find_last_not_of(' ') - first + 1);
  if (media.size() != kType.size()) return false;
  for (std::size_t i = 0; i < media.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(media[i])) != kType[i]) return false;
  }
  return true;
}

Route RouteOf(std::string_view method, std::string_view path, std::string_view content_type, bool webhook_port) {
  Route route;
  const bool review = webhook_port && (path == "/mutate" || path == "/validate" || path == "/admit");
  const bool probe = path == "/healthz" || path == "/readyz";
  const bool metrics = webhook_port && path == "/metrics";
  if (review) {
    if (method != "POST") {
      route.refusal = {405, "method " + std::string(method.substr(0, 32)) + " is not allowed on " + std::string(path),
                       "POST"};
    } else if (!IsJsonContentType(content_type)) {
      route.refusal = {
          415, "Content-Type must be application/json, got \"" + std::string(content_type.substr(0, 64)) + "\""};
    } else {
      route.kind = path == "/mutate" ? Route::kMutate : path == "/validate" ? Route::kValidate : Route::kAdmit;
    }
  } else if (probe || metrics) {
    if (method != "GET" && method != "HEAD") {
      route.refusal = {405, "method " + std::string(method.substr(0, 32)) + " is not allowed on " + std::string(path),
                       "GET, HEAD"};
    } else {
      route.kind = probe ? Route::kProbe : Route::kMetrics;
    }
  } else {
    route.refusal = {404, "no such path: " + std::string(path.substr(0, 256))};
  }
  return route;
}

std::string TimeoutParam(std::string_view target) {
  const std::size_t q = target.find('?');
  if (q == std::string_view::npos) return {};
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    const std::size_t amp = query.find('&');
    const std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    const std::size_t eq = pair.find('=');
    if (Decoded(pair.substr(0, eq), true) != "timeout") continue;
    return eq == std::string_view::npos ? std::string() : Decoded(pair.substr(eq + 1), true);
  }
  return {};
}

}  // namespace ray_webhook
