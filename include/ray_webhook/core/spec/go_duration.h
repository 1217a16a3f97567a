// Go's time.ParseDuration and strconv.Atoi, as KubeRay reads durations and
// counts written as text: the ray.io/initializing-timeout annotation and a
// cron schedule's "@every <duration>".
//
// Contract: pure, never throws. Each returns nullopt exactly where Go returns
// an error (bad syntax, unknown unit, a value out of int64 range), so a rule
// refuses only what the operator itself cannot read.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ray_webhook {

// "1h30m", "-1.5s", "300ms", "0" -> nanoseconds. Units: ns, us, µs, μs, ms, s, m, h.
std::optional<std::int64_t> ParseGoDuration(std::string_view text);
// "42", "+7", "-3" -> the integer (Go's int is 64 bits on the operator's platforms).
std::optional<std::int64_t> ParseGoInt(std::string_view text);

}  // namespace ray_webhook
