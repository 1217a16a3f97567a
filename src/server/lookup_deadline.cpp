#include "ray_webhook/server/lookup_deadline.h"

#include <algorithm>

namespace ray_webhook {

std::optional<std::chrono::microseconds> ParseGoDuration(std::string_view text) {
  if (text.empty() || text.size() > 64) return std::nullopt;
  double total_us = 0;
  while (!text.empty()) {
    std::size_t i = 0;
    double whole = 0, fraction = 0, scale = 1;
    bool digits = false;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') whole = whole * 10 + (text[i++] - '0'), digits = true;
    if (i < text.size() && text[i] == '.') {
      ++i;
      while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
        scale /= 10;
        fraction += (text[i++] - '0') * scale;
        digits = true;
      }
    }
    if (!digits) return std::nullopt;
    text.remove_prefix(i);
    double unit_us;
    if (text.starts_with("ns")) {
      unit_us = 0.001, text.remove_prefix(2);
    } else if (text.starts_with("us")) {
      unit_us = 1, text.remove_prefix(2);
    } else if (text.starts_with("\xc2\xb5s")) {  // µs
      unit_us = 1, text.remove_prefix(3);
    } else if (text.starts_with("ms")) {
      unit_us = 1000, text.remove_prefix(2);
    } else if (text.starts_with("s")) {
      unit_us = 1e6, text.remove_prefix(1);
    } else if (text.starts_with("m")) {
      unit_us = 60e6, text.remove_prefix(1);
    } else if (text.starts_with("h")) {
      unit_us = 3600e6, text.remove_prefix(1);
    } else {
      return std::nullopt;
    }
    total_us += (whole + fraction) * unit_us;
  }
  if (total_us < 1 || total_us > 86400e6) return std::nullopt;
  return std::chrono::microseconds(static_cast<long long>(total_us));
}

std::chrono::milliseconds LookupDeadline(std::string_view timeout_param, std::chrono::milliseconds kube_api_timeout) {
  const auto timeout = ParseGoDuration(timeout_param);
  if (!timeout) return kube_api_timeout;
  const auto call = std::chrono::duration_cast<std::chrono::milliseconds>(*timeout);
  const auto margin = std::min<std::chrono::milliseconds>(std::chrono::seconds(1), call / 4);
  return std::max(std::chrono::milliseconds(1), std::min(kube_api_timeout, call - margin));
}

}  // namespace ray_webhook
