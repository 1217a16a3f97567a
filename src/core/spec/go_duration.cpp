#include "ray_webhook/core/spec/go_duration.h"

#include <array>
#include <utility>

namespace ray_webhook {

namespace {

constexpr std::uint64_t kMaxMagnitude = std::uint64_t{1} << 63;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The leading digits of s as an integer; false when it passes 2^63.
bool LeadingInt(std::string_view& s, std::uint64_t* out) {
  std::uint64_t x = 0;
  std::size_t i = 0;
  for (; i < s.size() && IsDigit(s[i]); ++i) {
    if (x > (kMaxMagnitude - 1) / 10) return false;
    x = x * 10 + static_cast<std::uint64_t>(s[i] - '0');
    if (x > kMaxMagnitude) return false;
  }
  *out = x;
  s.remove_prefix(i);
  return true;
}

// The digits after a '.', as a numerator and a scale; digits past what
// int64 holds are consumed and dropped, as Go does.
void LeadingFraction(std::string_view& s, std::uint64_t* numerator, double* scale) {
  std::uint64_t x = 0;
  double sc = 1;
  bool overflow = false;
  std::size_t i = 0;
  for (; i < s.size() && IsDigit(s[i]); ++i) {
    if (overflow) continue;
    if (x > (kMaxMagnitude - 1) / 10) {
      overflow = true;
      continue;
    }
    const std::uint64_t y = x * 10 + static_cast<std::uint64_t>(s[i] - '0');
    if (y > kMaxMagnitude) {
      overflow = true;
      continue;
    }
    x = y;
    sc *= 10;
  }
  *numerator = x;
  *scale = sc;
  s.remove_prefix(i);
}

std::optional<std::uint64_t> UnitNanoseconds(std::string_view unit) {
  static constexpr std::array<std::pair<std::string_view, std::uint64_t>, 8> kUnits = {{
      {"ns", 1},
      {"us", 1'000},
      {"\xC2\xB5s", 1'000},  // U+00B5 micro sign
      {"\xCE\xBCs", 1'000},  // U+03BC Greek mu
      {"ms", 1'000'000},
      {"s", 1'000'000'000},
      {"m", 60'000'000'000},
      {"h", 3'600'000'000'000},
  }};
  for (const auto& [name, ns] : kUnits) {
    if (name == unit) return ns;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::int64_t> ParseGoDuration(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return std::nullopt;
  std::uint64_t total = 0;
  while (!s.empty()) {
    if (!(s.front() == '.' || IsDigit(s.front()))) return std::nullopt;
    const std::size_t before = s.size();
    std::uint64_t whole = 0;
    if (!LeadingInt(s, &whole)) return std::nullopt;
    const bool has_whole = s.size() != before;
    std::uint64_t fraction = 0;
    double scale = 1;
    bool has_fraction = false;
    if (!s.empty() && s.front() == '.') {
      s.remove_prefix(1);
      const std::size_t at = s.size();
      LeadingFraction(s, &fraction, &scale);
      has_fraction = s.size() != at;
    }
    if (!has_whole && !has_fraction) return std::nullopt;
    std::size_t unit_end = 0;
    while (unit_end < s.size() && s[unit_end] != '.' && !IsDigit(s[unit_end])) ++unit_end;
    if (unit_end == 0) return std::nullopt;
    const std::optional<std::uint64_t> unit = UnitNanoseconds(s.substr(0, unit_end));
    s.remove_prefix(unit_end);
    if (!unit) return std::nullopt;
    if (whole > kMaxMagnitude / *unit) return std::nullopt;
    std::uint64_t value = whole * *unit;
    if (fraction > 0) {
      value += static_cast<std::uint64_t>(static_cast<double>(fraction) * (static_cast<double>(*unit) / scale));
      if (value > kMaxMagnitude) return std::nullopt;
    }
    total += value;
    if (total > kMaxMagnitude) return std::nullopt;
  }
  if (negative) return total == kMaxMagnitude ? INT64_MIN : -static_cast<std::int64_t>(total);
  if (total > kMaxMagnitude - 1) return std::nullopt;
  return static_cast<std::int64_t>(total);
}

std::optional<std::int64_t> ParseGoInt(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t x = 0;
  for (const char c : s) {
    if (!IsDigit(c) || x > kMaxMagnitude / 10) return std::nullopt;
    x = x * 10 + static_cast<std::uint64_t>(c - '0');
    if (x > kMaxMagnitude) return std::nullopt;
  }
  if (negative) return x == kMaxMagnitude ? INT64_MIN : -static_cast<std::int64_t>(x);
  if (x == kMaxMagnitude) return std::nullopt;
  return static_cast<std::int64_t>(x);
}

}  // namespace ray_webhook
