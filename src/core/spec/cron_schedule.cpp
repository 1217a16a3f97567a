#include "cron_schedule.h"

#include <array>
#include <cctype>
#include <cstdint>
#include <span>
#include <vector>

#include "ray_webhook/core/spec/go_duration.h"
#include "spec_json.h"

namespace ray_webhook {

namespace {

struct FieldBounds {
  std::string_view name;
  std::int64_t min;
  std::int64_t max;
  // Lowercase names, the first worth `min`; empty when the field has none.
  std::span<const std::string_view> names;
};

constexpr std::array<std::string_view, 12> kMonthNames = {"jan", "feb", "mar", "apr", "may", "jun",
                                                          "jul", "aug", "sep", "oct", "nov", "dec"};
constexpr std::array<std::string_view, 7> kWeekdayNames = {"sun", "mon", "tue", "wed", "thu", "fri", "sat"};

constexpr std::array<FieldBounds, 5> kFields = {{
    {"minute", 0, 59, {}},
    {"hour", 0, 23, {}},
    {"day of month", 1, 31, {}},
    {"month", 1, 12, kMonthNames},
    {"day of week", 0, 6, kWeekdayNames},
}};

// The length of the Unicode white space character at s[i] (Go's unicode.IsSpace,
// which strings.Fields splits on), or 0.
std::size_t SpaceAt(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return k < s.size() ? static_cast<unsigned char>(s[k]) : 0u; };
  const unsigned c = byte(i);
  if (c == ' ' || (c >= '\t' && c <= '\r')) return 1;
  if (c == 0xC2 && (byte(i + 1) == 0x85 || byte(i + 1) == 0xA0)) return 2;
  if (c == 0xE1 && byte(i + 1) == 0x9A && byte(i + 2) == 0x80) return 3;  // U+1680
  if (c == 0xE2 && byte(i + 1) == 0x80) {
    const unsigned t = byte(i + 2);
    if ((t >= 0x80 && t <= 0x8A) || t == 0xA8 || t == 0xA9 || t == 0xAF) return 3;  // U+2000..200A, 2028, 2029, 202F
  }
  if (c == 0xE2 && byte(i + 1) == 0x81 && byte(i + 2) == 0x9F) return 3;  // U+205F
  if (c == 0xE3 && byte(i + 1) == 0x80 && byte(i + 2) == 0x80) return 3;  // U+3000
  return 0;
}

std::vector<std::string_view> Fields(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0, start = 0;
  bool in_field = false;
  while (i < s.size()) {
    const std::size_t space = SpaceAt(s, i);
    if (space > 0) {
      if (in_field) out.push_back(s.substr(start, i - start));
      in_field = false;
      i += space;
    } else {
      if (!in_field) start = i;
      in_field = true;
      ++i;
    }
  }
  if (in_field) out.push_back(s.substr(start));
  return out;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const std::size_t at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// A number (Go's strconv.Atoi, not negative) or, where the field has names, a name.
std::optional<std::string> ReadValue(std::string_view text, const FieldBounds& field, std::int64_t* out) {
  const std::string lower = Lower(text);
  for (std::size_t i = 0; i < field.names.size(); ++i) {
    if (field.names[i] == lower) {
      *out = field.min + static_cast<std::int64_t>(i);
      return std::nullopt;
    }
  }
  const std::optional<std::int64_t> n = ParseGoInt(text);
  if (!n) return spec_json::SingleQuoted(text) + " is not a number";
  if (*n < 0) return spec_json::SingleQuoted(text) + " is negative";
  *out = *n;
  return std::nullopt;
}

// One item of a comma-separated list: "*", "?", "a", "a-b", each with an optional "/step".
std::optional<std::string> CheckRange(std::string_view expr, const FieldBounds& field) {
  const std::vector<std::string_view> range_and_step = Split(expr, '/');
  if (range_and_step.size() > 2) return spec_json::SingleQuoted(expr) + " has more than one '/'";
  const std::vector<std::string_view> low_and_high = Split(range_and_step[0], '-');
  std::int64_t start = field.min, end = field.max;
  // As robfig/cron reads "*-x": a star is the whole range and what follows a '-' is not read.
  if (low_and_high[0] != "*" && low_and_high[0] != "?") {
    if (auto error = ReadValue(low_and_high[0], field, &start)) return error;
    if (low_and_high.size() == 1) {
      end = start;
    } else if (low_and_high.size() == 2) {
      if (auto error = ReadValue(low_and_high[1], field, &end)) return error;
    } else {
      return spec_json::SingleQuoted(expr) + " has more than one '-'";
    }
  }
  if (range_and_step.size() == 2) {
    std::int64_t step = 0;
    const std::optional<std::int64_t> n = ParseGoInt(range_and_step[1]);
    if (!n || *n < 0) return "the step in '" + std::string(expr) + "' is not a number";
    step = *n;
    if (low_and_high.size() == 1) end = field.max;  // "a/n" runs from a to the field's end
    if (step == 0) return "the step in '" + std::string(expr) + "' is zero";
  }
  const std::string where = " in the " + std::string(field.name) + " field '" + std::string(expr) + "'";
  if (start < field.min) return std::to_string(start) + " is below " + std::to_string(field.min) + where;
  if (end > field.max) return std::to_string(end) + " is above " + std::to_string(field.max) + where;
  if (start > end) return "the range starts after it ends" + where;
  return std::nullopt;
}

std::optional<std::string> CheckDescriptor(std::string_view spec) {
  for (const std::string_view name :
       {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}) {
    if (spec == name) return std::nullopt;
  }
  constexpr std::string_view kEvery = "@every ";
  if (spec.starts_with(kEvery)) {
    if (ParseGoDuration(spec.substr(kEvery.size()))) return std::nullopt;
    return "'" + std::string(spec.substr(kEvery.size())) + "' is not a duration such as 90s, 15m or 1h30m";
  }
  return spec_json::SingleQuoted(spec) +
         " is not one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly or @every <duration>";
}

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && SpaceAt(s, 0) > 0) s.remove_prefix(SpaceAt(s, 0));
  // Trailing white space does not matter past this point: Fields drops it and
  // a descriptor followed by a space is refused either way.
  return s;
}

}  // namespace

bool TimeZoneNameCannotExist(std::string_view name) {
  if (name.empty() || name == "UTC" || name == "Local") return false;
  if (name.find("..") != std::string_view::npos || name.front() == '/' || name.front() == '\\') return true;
  for (const char c : name) {
    const bool ok =
        std::isalnum(static_cast<unsigned char>(c)) || c == '/' || c == '_' || c == '-' || c == '+' || c == '.';
    if (!ok) return true;
  }
  return false;
}

std::optional<std::string> StandardCronScheduleError(std::string_view spec) {
  if (spec.empty()) return "the schedule is empty";
  if (spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=")) {
    const std::size_t space = spec.find(' ');
    if (space == std::string_view::npos) return "a TZ= prefix must be followed by a space and the schedule";
    const std::size_t eq = spec.find('=');
    const std::string_view zone = spec.substr(eq + 1, space - eq - 1);
    if (TimeZoneNameCannotExist(zone)) return spec_json::SingleQuoted(zone) + " is not a time zone name";
    spec = TrimSpace(spec.substr(space));
    // robfig/cron trims both ends here, so a descriptor may be followed by spaces.
    while (!spec.empty() && (spec.back() == ' ' || (spec.back() >= '\t' && spec.back() <= '\r'))) spec.remove_suffix(1);
  }
  if (spec.starts_with('@')) return CheckDescriptor(spec);
  const std::vector<std::string_view> fields = Fields(spec);
  if (fields.size() != kFields.size()) {
    return "a schedule has 5 fields (minute, hour, day of month, month, day of week), found " +
           std::to_string(fields.size());
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    // Empty items of a list ("1,,2", ",") are skipped, as strings.FieldsFunc drops them.
    for (const std::string_view item : Split(fields[i], ',')) {
      if (item.empty()) continue;
      if (auto error = CheckRange(item, kFields[i])) return error;
    }
  }
  return std::nullopt;
}

}  // namespace ray_webhook
