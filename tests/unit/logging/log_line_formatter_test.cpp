#include "ray_webhook/logging/log_line_formatter.h"

#include <gtest/gtest.h>
#include <spdlog/pattern_formatter.h>

#include <chrono>
#include <string>
#include <vector>

namespace ray_webhook {
namespace {

using std::chrono::microseconds;
using std::chrono::seconds;

std::string Format(spdlog::formatter& f, const spdlog::details::log_msg& msg) {
  spdlog::memory_buf_t buf;
  f.format(msg, buf);
  return std::string(buf.data(), buf.size());
}

spdlog::details::log_msg Message(spdlog::log_clock::time_point when, spdlog::level::level_enum level,
                                 std::string_view text) {
  spdlog::details::log_msg msg("ray-webhook", level, spdlog::string_view_t(text.data(), text.size()));
  msg.time = when;
  return msg;
}

spdlog::log_clock::time_point At(std::int64_t epoch_seconds, std::int64_t micros = 0) {
  return spdlog::log_clock::time_point(
      std::chrono::duration_cast<spdlog::log_clock::duration>(seconds(epoch_seconds) + microseconds(micros)));
}

TEST(LogLineFormatter, WritesUtcTimeToTheMicrosecondLevelAndMessage) {
  LogLineFormatter f;
  // 2026-11-30T18:05:47Z
  EXPECT_EQ(Format(f, Message(At(1796061947, 123456), spdlog::level::info, "review path=/mutate")),
            "2026-11-30T18:05:47.123456Z info review path=/mutate\n");
  EXPECT_EQ(Format(f, Message(At(1796061947, 7), spdlog::level::warn, "x")), "2026-11-30T18:05:47.000007Z warning x\n");
}

// The pattern main.cpp used before this formatter replaced it: every line must
// stay byte for byte what it was, for whoever parses these logs.
TEST(LogLineFormatter, MatchesSpdlogsPatternFormatterForThePattern) {
  spdlog::pattern_formatter pattern("%Y-%m-%dT%H:%M:%S.%fZ %l %v", spdlog::pattern_time_type::utc);
  LogLineFormatter mine;
  const std::vector<spdlog::log_clock::time_point> times = {
      // Not second 0: pattern_formatter's cache starts there, so it writes 1900-01-00 for it.
      At(1),
      At(59, 999999),
      At(951782400, 500000) /* 2000-02-29 */,
      At(1796061947, 123456),
      At(1796061947, 123999) /* same second: the cached prefix */,
      At(1796061948) /* next second */,
      At(1798761599, 999999) /* 2026-12-31T23:59:59 */,
      At(1798761600) /* 2027-01-01 */,
      At(7258118399, 1) /* 2199-12-31T23:59:59 */,
  };
  const std::vector<spdlog::level::level_enum> levels = {spdlog::level::trace, spdlog::level::debug,
                                                         spdlog::level::info,  spdlog::level::warn,
                                                         spdlog::level::err,   spdlog::level::critical};
  for (const auto& when : times) {
    for (const auto level : levels) {
      for (std::string_view text : {"", "serving on https://0.0.0.0:8443", "a line with = and \"quotes\""}) {
        const auto msg = Message(when, level, text);
        EXPECT_EQ(Format(mine, msg), Format(pattern, msg)) << when.time_since_epoch().count();
      }
    }
  }
}

TEST(LogLineFormatter, ClonesStartWithoutTheCachedSecond) {
  LogLineFormatter f;
  Format(f, Message(At(1796061947), spdlog::level::info, "a"));
  auto copy = f.clone();
  EXPECT_EQ(Format(*copy, Message(At(0, 1), spdlog::level::info, "b")), "1970-01-01T00:00:00.000001Z info b\n");
  EXPECT_EQ(Format(f, Message(At(1796061947, 2), spdlog::level::info, "c")), "2026-11-30T18:05:47.000002Z info c\n");
}

}  // namespace
}  // namespace ray_webhook
