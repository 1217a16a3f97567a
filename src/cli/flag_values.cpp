#include "flag_values.h"

#include <charconv>

#include "spec_flags.h"

namespace ray_webhook {

using std::chrono::microseconds;

bool ParseInt(std::string_view text, int min, int max, int* out) {
  int v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size() || v < min || v > max) return false;
  *out = v;
  return true;
}

std::optional<microseconds> ParseDuration(std::string_view s, microseconds min, microseconds max) {
  long long scale = 1000000;
  if (s.ends_with("us")) {
    scale = 1;
    s.remove_suffix(2);
  } else if (s.ends_with("ms")) {
    scale = 1000;
    s.remove_suffix(2);
  } else if (s.ends_with("s")) {
    s.remove_suffix(1);
  } else if (s.ends_with("m")) {
    scale = 60000000;
    s.remove_suffix(1);
  }
  int n = 0;
  if (!ParseInt(s, 0, 3600 * 1000, &n)) return std::nullopt;
  const microseconds d(n * scale);
  if (d < min || d > max) return std::nullopt;
  return d;
}

std::string ShowDuration(microseconds d) {
  const long long us = d.count();
  if (us % 1000000 == 0) return std::to_string(us / 1000000) + "s";
  if (us % 1000 == 0) return std::to_string(us / 1000) + "ms";
  return std::to_string(us) + "us";
}

std::string Got(std::string_view value) { return "\"" + std::string(value) + "\""; }

Status IntFlag(std::string_view name, std::string_view v, int min, int max, int* out) {
  if (ParseInt(v, min, max, out)) return Status::Ok();
  return Status::Error(std::string(name) + " must be a number from " + std::to_string(min) + " to " +
                       std::to_string(max) + ", got " + Got(v));
}

Status RuleModeFlag(std::string_view name, std::string_view v, RuleMode* out) {
  if (!ParseRuleMode(v, out)) return Status::Error(std::string(name) + " must be enforce, warn or off; got " + Got(v));
  return Status::Ok();
}

std::string ShowRuleMode(RuleMode m) {
  return m == RuleMode::kEnforce ? "enforce" : m == RuleMode::kWarn ? "warn" : "off";
}

}  // namespace ray_webhook
