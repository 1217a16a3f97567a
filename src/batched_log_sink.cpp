#include "ray_webhook/batched_log_sink.h"

#include <spdlog/pattern_formatter.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace ray_webhook {

namespace {

std::atomic<std::uint64_t> next_sink_id{1};

// The formatter a thread uses for one sink: pattern formatters cache the
// current second's text, so they cannot be shared between threads.
struct ThreadFormatter {
  std::uint64_t sink_id = 0;
  std::uint64_t version = 0;
  std::unique_ptr<spdlog::formatter> formatter;
  spdlog::memory_buf_t line;
};

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

BatchedLogSink::BatchedLogSink(int fd, Options options)
    : fd_(fd),
      options_(options),
      id_(next_sink_id.fetch_add(1)),
      formatter_(std::make_unique<spdlog::pattern_formatter>()) {
  batch_.reserve(options_.batch_bytes + 4096);
  writing_.reserve(options_.batch_bytes + 4096);
  writer_ = std::thread([this] { WriterLoop(); });
}

BatchedLogSink::~BatchedLogSink() {
  {
    std::lock_guard<std::mutex> lock(batch_mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  writer_.join();
  WritePending();
}

std::unique_ptr<spdlog::formatter> BatchedLogSink::CloneFormatter() const {
  std::lock_guard<std::mutex> lock(formatter_mutex_);
  return formatter_->clone();
}

void BatchedLogSink::set_pattern(const std::string& pattern) {
  set_formatter(std::make_unique<spdlog::pattern_formatter>(pattern));
}

void BatchedLogSink::set_formatter(std::unique_ptr<spdlog::formatter> formatter) {
  std::lock_guard<std::mutex> lock(formatter_mutex_);
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

  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(batch_mutex_);
    if (batch_.size() + mine.line.size() > options_.max_pending_bytes) {
      ++dropped_;
      dropped_total_.fetch_add(1);
      return;
    }
    batch_.append(mine.line.data(), mine.line.size());
    if (!wake_requested_ && (batch_.size() >= options_.batch_bytes || msg.level >= spdlog::level::warn)) {
      wake_requested_ = wake = true;
    }
  }
  if (wake) wake_.notify_one();  // once per batch, not per line
}

void BatchedLogSink::flush() { WritePending(); }

void BatchedLogSink::WritePending() {
  std::lock_guard<std::mutex> write_lock(write_mutex_);
  std::uint64_t dropped = 0;
  {
    std::lock_guard<std::mutex> lock(batch_mutex_);
    writing_.swap(batch_);  // batch_ gets the empty buffer, with its capacity
    wake_requested_ = false;
    std::swap(dropped, dropped_);
  }
  if (dropped > 0) {
    writing_ += "ray-webhook: " + std::to_string(dropped) +
                " log lines were dropped because the log output could not keep up\n";
  }
  WriteAll(fd_, writing_);
  writing_.clear();
}

void BatchedLogSink::WriterLoop() {
  std::unique_lock<std::mutex> lock(batch_mutex_);
  while (!stop_) {
    wake_.wait_for(lock, options_.interval, [this] { return stop_ || wake_requested_; });
    if (stop_) break;
    lock.unlock();
    WritePending();
    lock.lock();
  }
}

}  // namespace ray_webhook
