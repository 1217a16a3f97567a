// BatchedLogSink: an spdlog sink that collects log lines in memory and has its
// own thread write them to a file descriptor (the server's stderr) in batches.
//
// Contract: the thread that logs formats its line with its own copy of the
// formatter and appends it to a shared buffer under a lock held only for that
// copy; it never writes, never waits for the writer and never holds a lock
// while formatting. The writer thread writes the buffer in one write every
// `interval`, as soon as it passes batch_bytes, and as soon as a line at warn
// level or above arrives. flush() writes everything logged so far before it
// returns; destruction flushes. Lines keep the order in which they entered the
// buffer. When the descriptor is slower than the server and max_pending_bytes
// are waiting, new lines are dropped and counted, and the count is written
// when the writer catches up: logging never slows admission answers.
// Writes resume after EINTR and partial writes; a write that fails drops that
// batch. It never closes the descriptor. Thread-safe.
#pragma once

#include <spdlog/formatter.h>
#include <spdlog/sinks/sink.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

namespace ray_webhook {

class BatchedLogSink final : public spdlog::sinks::sink {
 public:
  struct Options {
    std::chrono::milliseconds interval{500};
    std::size_t batch_bytes = 64 * 1024;
    std::size_t max_pending_bytes = 4 * 1024 * 1024;
  };

  explicit BatchedLogSink(int fd) : BatchedLogSink(fd, Options{}) {}
  BatchedLogSink(int fd, Options options);
  ~BatchedLogSink() override;
  BatchedLogSink(const BatchedLogSink&) = delete;
  BatchedLogSink& operator=(const BatchedLogSink&) = delete;

  void log(const spdlog::details::log_msg& msg) override;
  void flush() override;
  void set_pattern(const std::string& pattern) override;
  void set_formatter(std::unique_ptr<spdlog::formatter> formatter) override;

  // Lines dropped so far because max_pending_bytes were waiting.
  std::uint64_t dropped() const { return dropped_total_.load(); }

 private:
  void WriterLoop();
  void WritePending();  // takes write_mutex_, then batch_mutex_ briefly
  std::unique_ptr<spdlog::formatter> CloneFormatter() const;

  const int fd_;
  const Options options_;
  const std::uint64_t id_;  // tells this sink's per-thread formatters from another's
  mutable std::mutex formatter_mutex_;
  std::unique_ptr<spdlog::formatter> formatter_;  // guarded by formatter_mutex_
  std::atomic<std::uint64_t> formatter_version_{0};
  std::atomic<std::uint64_t> dropped_total_{0};

  std::mutex batch_mutex_;  // the only lock a logging thread takes
  std::condition_variable wake_;
  std::string batch_;            // guarded by batch_mutex_
  std::uint64_t dropped_ = 0;    // guarded by batch_mutex_, not yet reported
  bool wake_requested_ = false;  // guarded by batch_mutex_
  bool stop_ = false;            // guarded by batch_mutex_

  std::mutex write_mutex_;  // taken before batch_mutex_: batches are written in order
  std::string writing_;     // guarded by write_mutex_
  std::thread writer_;
};

}  // namespace ray_webhook
