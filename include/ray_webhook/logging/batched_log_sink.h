// BatchedLogSink: an spdlog sink that collects log lines in memory and has its
// own thread write them to a file descriptor (the server's stderr) in batches.
//
// Contract: the thread that logs formats its line with its own copy of the
// formatter and copies it into a ring buffer, in a slot it reserves with one
// atomic compare-and-swap: it takes no lock, so a logging thread that the
// scheduler preempts never stalls the others, never writes and never waits
// for the writer. The writer thread writes what the ring holds every
// `interval`, as soon as batch_bytes are waiting, and as soon as a line at
// warn level or above arrives. flush() writes everything logged so far before
// it returns; destruction flushes. Lines are written in the order their slots
// were reserved. The ring holds max_pending_bytes, rounded up to a power of
// two, counting 8 bytes per line besides its text rounded up to 8; when the
// descriptor is slower than the server and the ring is full, new lines are
// dropped and counted, and the count is written when the writer catches up:
// logging never slows admission answers. Writes resume after EINTR and
// partial writes; a write that fails drops that batch. It never closes the
// descriptor. Thread-safe.
#pragma once

#include <spdlog/formatter.h>
#include <spdlog/sinks/sink.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "ray_webhook/mutex.h"

namespace ray_webhook {

class BatchedLogSink final : public spdlog::sinks::sink {
 public:
  struct Options {
    std::chrono::milliseconds interval{500};
    std::size_t batch_bytes = 64 * 1024;
    // The ring's size, allocated up front; its pages count in RSS once used.
    std::size_t max_pending_bytes = 256 * 1024;
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

  // Lines dropped so far because the ring was full.
  std::uint64_t dropped() const { return dropped_total_.load(); }

 private:
  void WriterLoop() EXCLUDES(wake_mutex_, write_mutex_);
  // Writes the lines whose slots are filled, in order. With wait_for_all it
  // also waits for slots reserved before the call to be filled (flush).
  void WritePending(bool wait_for_all) EXCLUDES(write_mutex_);
  void RequestWrite() EXCLUDES(wake_mutex_);
  std::unique_ptr<spdlog::formatter> CloneFormatter() const EXCLUDES(formatter_mutex_);

  const int fd_;
  const Options options_;
  const std::uint64_t id_;  // tells this sink's per-thread formatters from another's
  mutable Mutex formatter_mutex_;
  std::unique_ptr<spdlog::formatter> formatter_ GUARDED_BY(formatter_mutex_);
  std::atomic<std::uint64_t> formatter_version_{0};

  // The ring: bytes [tail_, head_) are reserved, in slots of an 8-byte header
  // (0 while the slot is being filled, else the text's length + 1) and the
  // text, padded to 8. Positions only grow; the byte of position p is at
  // p & (capacity_ - 1). Consumed bytes are zeroed before tail_ passes them.
  const std::size_t capacity_;
  struct FreeRing {
    void operator()(char* p) const;
  };
  std::unique_ptr<char, FreeRing> ring_;
  std::atomic<std::uint64_t> head_{0};
  std::atomic<std::uint64_t> tail_{0};     // advanced by the writer only
  std::atomic<std::uint64_t> dropped_{0};  // not yet reported
  std::atomic<std::uint64_t> dropped_total_{0};

  // Waking the writer: a logging thread takes wake_mutex_ only to notify,
  // once per batch or warning, never per line.
  std::atomic<bool> wake_requested_{false};
  Mutex wake_mutex_;
  std::condition_variable wake_;
  bool stop_ GUARDED_BY(wake_mutex_) = false;

  Mutex write_mutex_;  // one consumer at a time: the writer thread or flush()
  std::string writing_ GUARDED_BY(write_mutex_);
  std::thread writer_;
};

}  // namespace ray_webhook
