// LogValue: a user-supplied value in a warn or error line, written as
// AppendLogValue writes it (quoted and escaped when it needs to be), so a
// request can never forge a log line. Internal to the server's sources.
#pragma once

#include <spdlog/fmt/fmt.h>

#include <algorithm>
#include <string>
#include <string_view>

#include "ray_webhook/logging/review_log_line.h"

namespace ray_webhook {

struct LogValue {
  std::string_view value;
};

}  // namespace ray_webhook

template <>
struct fmt::formatter<ray_webhook::LogValue> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <typename Context>
  auto format(const ray_webhook::LogValue& v, Context& ctx) const {
    std::string shown;
    ray_webhook::AppendLogValue(v.value, &shown);
    return std::copy(shown.begin(), shown.end(), ctx.out());
  }
};
