// LogLineFormatter: the spdlog formatter of the server's log lines, written
// out by hand. A line reads
//
//   2026-11-30T18:05:47.123456Z info review path=/mutate uid=...
//
// (UTC time stamp to the microsecond, spdlog's level name, the message, "\n"):
// byte for byte what spdlog's pattern_formatter makes of the pattern
// "%Y-%m-%dT%H:%M:%S.%fZ %l %v" in UTC, in a fraction of its instructions,
// since the review line is logged on every admission request at info level
// (bench/journal/35-info-line-by-hand.md).
//
// Contract: keeps the text of the last second it formatted, so an instance
// must not be used by two threads at once; clone() gives an independent one
// (BatchedLogSink gives every logging thread its own). Never allocates once
// dest has room for the line; never fails.
#pragma once

#include <spdlog/formatter.h>

#include <cstdint>
#include <memory>

namespace ray_webhook {

class LogLineFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;

 private:
  // "YYYY-MM-DDTHH:MM:SS." of cached_second_ (seconds since the epoch).
  std::int64_t cached_second_ = INT64_MIN;
  char prefix_[20] = {};
};

}  // namespace ray_webhook
