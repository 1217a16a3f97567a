#include "ray_webhook/logging/batched_log_sink.h"

#include <spdlog/pattern_formatter.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace ray_webhook {

namespace {

std::atomic<std::uint64_t> next_sink_id{1};

constexpr std::uint64_t kHeaderBytes = 8;
// The writer copies lines out of the ring and writes them this many bytes at a time.
constexpr std::size_t kWriteChunk = 64 * 1024;

// The formatter a thread uses for one sink: pattern formatters cache the
// current second's text, so they cannot be shared between threads.
struct ThreadFormatter {
  std::uint64_t sink_id = 0;
  std::uint64_t version = 0;
  std::unique_ptr<spdlog::formatter> formatter;
  spdlog::memory_buf_t line;
};

std::uint64_t RoundUp8(std::uint64_t n) { return (n + 7) & ~std::uint64_t{7}; }

std::size_t RingCapacity(std::size_t max_pending) {
  std::size_t c = 64;
  while (c < max_pending) c <<= 1;
  return c;
}

void WriteAll(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the batch is dropped: logging must not stop the server
    p += n;
    left -= static_cast<std::size_t>(n);
  }
}

}  // namespace

void BatchedLogSink::FreeRing::operator()(char* p) const { std::free(p); }

BatchedLogSink::BatchedLogSink(int fd, Options options)
    : fd_(fd),
      options_(options),
      id_(next_sink_id.fetch_add(1)),
      formatter_(std::make_unique<spdlog::pattern_formatter>()),
      capacity_(RingCapacity(options.max_pending_bytes)),
      // calloc: large rings come zeroed from the kernel, page by page as they are used.
      ring_(static_cast<char*>(std::calloc(capacity_, 1))) {
  if (!ring_) throw std::bad_alloc();
  writing_.reserve(kWriteChunk + 4096);
  writer_ = std::thread([this] { WriterLoop(); });
}

BatchedLogSink::~BatchedLogSink() {
  {
    MutexLock lock(&wake_mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  writer_.join();
  WritePending(true);
}

std::unique_ptr<spdlog::formatter> BatchedLogSink::CloneFormatter() const {
  MutexLock lock(&formatter_mutex_);
  return formatter_->clone();
}

void BatchedLogSink::set_pattern(const std::string& pattern) {
  set_formatter(std::make_unique<spdlog::pattern_formatter>(pattern));
}

void BatchedLogSink::set_formatter(std::unique_ptr<spdlog::formatter> formatter) {
  MutexLock lock(&formatter_mutex_);
  formatter_ = std::move(formatter);
  formatter_version_.fetch_add(1);
}

void BatchedLogSink::log(const spdlog::details::log_msg& msg) {
  thread_local ThreadFormatter mine;
  const std::uint64_t version = formatter_version_.load();
  if (mine.sink_id != id_ || mine.version != version || !mine.formatter) {
    mine.formatter = CloneFormatter();
    mine.sink_id = id_;
    mine.version = version;
  }
  mine.line.clear();
  mine.formatter->format(msg, mine.line);

  // Reserve a slot: one compare-and-swap, retried only when another thread
  // reserved at the same moment.
  const std::uint64_t size = mine.line.size();
  const std::uint64_t need = kHeaderBytes + RoundUp8(size);
  std::uint64_t head = head_.load(std::memory_order_relaxed);
  do {
    if (head + need - tail_.load(std::memory_order_acquire) > capacity_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      dropped_total_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  } while (!head_.compare_exchange_weak(head, head + need, std::memory_order_acq_rel, std::memory_order_relaxed));

  // Fill it: the text, wrapping at the ring's end, then the header, which
  // tells the writer the slot is complete.
  char* ring = ring_.get();
  const std::uint64_t mask = capacity_ - 1;
  const std::size_t at = static_cast<std::size_t>((head + kHeaderBytes) & mask);
  const std::size_t first = std::min<std::size_t>(size, capacity_ - at);
  std::memcpy(ring + at, mine.line.data(), first);
  std::memcpy(ring, mine.line.data() + first, size - first);
  std::atomic_ref<std::uint64_t>(*reinterpret_cast<std::uint64_t*>(ring + (head & mask)))
      .store(size + 1, std::memory_order_release);

  const std::uint64_t waiting = head + need - tail_.load(std::memory_order_relaxed);
  if (waiting >= options_.batch_bytes || msg.level >= spdlog::level::warn) RequestWrite();
}

void BatchedLogSink::RequestWrite() {
  if (wake_requested_.exchange(true)) return;  // once per batch, not per line
  MutexLock lock(&wake_mutex_);
  wake_.notify_one();
}

void BatchedLogSink::flush() { WritePending(true); }

void BatchedLogSink::WritePending(bool wait_for_all) {
  MutexLock write_lock(&write_mutex_);
  char* ring = ring_.get();
  const std::uint64_t mask = capacity_ - 1;
  const std::uint64_t end = head_.load(std::memory_order_acquire);
  std::uint64_t tail = tail_.load(std::memory_order_relaxed);
  while (tail < end) {
    std::atomic_ref<std::uint64_t> header(*reinterpret_cast<std::uint64_t*>(ring + (tail & mask)));
    std::uint64_t value = header.load(std::memory_order_acquire);
    if (value == 0) {
      if (!wait_for_all) break;  // its thread is still copying; the next round takes it
      // flush(): a thread between reserving and filling its slot finishes in a moment.
      while ((value = header.load(std::memory_order_acquire)) == 0) std::this_thread::yield();
    }
    const std::size_t size = static_cast<std::size_t>(value - 1);
    const std::size_t at = static_cast<std::size_t>((tail + kHeaderBytes) & mask);
    const std::size_t first = std::min<std::size_t>(size, capacity_ - at);
    writing_.append(ring + at, first);
    writing_.append(ring, size - first);
    // Zero the slot before the tail passes it: a header read at any position
    // is 0 until the thread that reserved it has filled its slot.
    const std::uint64_t slot = kHeaderBytes + RoundUp8(size);
    const std::size_t from = static_cast<std::size_t>(tail & mask);
    const std::size_t zero_first = std::min<std::size_t>(slot, capacity_ - from);
    std::memset(ring + from, 0, zero_first);
    std::memset(ring, 0, slot - zero_first);
    tail += slot;
    tail_.store(tail, std::memory_order_release);
    if (writing_.size() >= kWriteChunk) {
      WriteAll(fd_, writing_);
      writing_.clear();
    }
  }
  if (const std::uint64_t dropped = dropped_.exchange(0, std::memory_order_relaxed)) {
    writing_ += "ray-webhook: " + std::to_string(dropped) +
                " log lines were dropped because the log output could not keep up\n";
  }
  WriteAll(fd_, writing_);
  writing_.clear();
}

void BatchedLogSink::WriterLoop() {
  MutexLock lock(&wake_mutex_);
  while (!stop_) {
    // Until asked, stopped or the interval is up (a wait with a predicate,
    // spelled out so that the analysis sees stop_ read under the lock).
    const auto deadline = std::chrono::steady_clock::now() + options_.interval;
    while (!stop_ && !wake_requested_.load()) {
      if (lock.WaitUntil(wake_, deadline) == std::cv_status::timeout) break;
    }
    if (stop_) break;
    // Cleared before writing: lines logged meanwhile may ask again.
    wake_requested_.store(false);
    lock.Unlock();
    WritePending(false);
    lock.Lock();
  }
}

}  // namespace ray_webhook
