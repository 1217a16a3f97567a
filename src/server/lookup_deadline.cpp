#include "ray_webhook/server/lookup_deadline.h"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "ray_webhook/core/spec/go_duration.h"

namespace ray_webhook {

std::chrono::milliseconds LookupDeadline(std::string_view timeout_param, std::chrono::milliseconds kube_api_timeout) {
  constexpr std::int64_t kDayNanoseconds = 86'400'000'000'000;
  const std::optional<std::int64_t> timeout = ParseGoDuration(timeout_param);
  if (!timeout || *timeout < 1'000 || *timeout > kDayNanoseconds) return kube_api_timeout;
  const auto call = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(*timeout));
  const auto margin = std::min<std::chrono::milliseconds>(std::chrono::seconds(1), call / 4);
  return std::max(std::chrono::milliseconds(1), std::min(kube_api_timeout, call - margin));
}

}  // namespace ray_webhook
