#include "ray_webhook/logging/log_line_formatter.h"

#include <spdlog/details/os.h>

#include <chrono>
#include <ctime>
#include <string_view>

namespace ray_webhook {
namespace {

void Put2(char* at, int value) {
  at[0] = static_cast<char>('0' + value / 10 % 10);
  at[1] = static_cast<char>('0' + value % 10);
}

}  // namespace

void LogLineFormatter::format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  using std::chrono::duration_cast;
  const auto since_epoch = msg.time.time_since_epoch();
  // Truncated, as pattern_formatter truncates (fmt_helper::time_fraction).
  const auto seconds = duration_cast<std::chrono::seconds>(since_epoch);
  if (seconds.count() != cached_second_) {
    cached_second_ = seconds.count();
    const std::time_t t = static_cast<std::time_t>(cached_second_);
    std::tm tm{};
    ::gmtime_r(&t, &tm);
    // Four digits, as %Y writes them until 9999; system_clock's nanoseconds end in 2262.
    const int year = tm.tm_year + 1900;
    Put2(prefix_, year / 100);
    Put2(prefix_ + 2, year % 100);
    prefix_[4] = '-';
    Put2(prefix_ + 5, tm.tm_mon + 1);
    prefix_[7] = '-';
    Put2(prefix_ + 8, tm.tm_mday);
    prefix_[10] = 'T';
    Put2(prefix_ + 11, tm.tm_hour);
    prefix_[13] = ':';
    Put2(prefix_ + 14, tm.tm_min);
    prefix_[16] = ':';
    Put2(prefix_ + 17, tm.tm_sec);
    prefix_[19] = '.';
  }
  auto micros = static_cast<std::uint32_t>(
      (duration_cast<std::chrono::microseconds>(since_epoch) - duration_cast<std::chrono::microseconds>(seconds))
          .count());
  char fraction[8];
  for (int i = 5; i >= 0; --i) {
    fraction[i] = static_cast<char>('0' + micros % 10);
    micros /= 10;
  }
  fraction[6] = 'Z';
  fraction[7] = ' ';
  const spdlog::string_view_t level = spdlog::level::to_string_view(msg.level);
  dest.append(prefix_, prefix_ + sizeof prefix_);
  dest.append(fraction, fraction + sizeof fraction);
  dest.append(level.data(), level.data() + level.size());
  dest.push_back(' ');
  dest.append(msg.payload.data(), msg.payload.data() + msg.payload.size());
  constexpr std::string_view kEol = spdlog::details::os::default_eol;
  dest.append(kEol.data(), kEol.data() + kEol.size());
}

std::unique_ptr<spdlog::formatter> LogLineFormatter::clone() const { return std::make_unique<LogLineFormatter>(); }

}  // namespace ray_webhook
