#include "ray_webhook/elastic_thread_pool.h"

#include <thread>

namespace ray_webhook {

ElasticThreadPool::ElasticThreadPool(std::size_t min_threads, std::size_t max_threads,
                                     std::chrono::milliseconds idle_exit)
    : min_threads_(min_threads), max_threads_(max_threads < min_threads ? min_threads : max_threads),
      idle_exit_(idle_exit) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < min_threads_; ++i) Spawn();
}

ElasticThreadPool::~ElasticThreadPool() { shutdown(); }

void ElasticThreadPool::Spawn() {
  // A thread counts as idle from its spawn, not from its first wait: else a
  // thread not yet scheduled would show as busy and draw a second spawn.
  ++threads_;
  ++idle_;
  // Detached: shutdown() waits for the count to reach zero instead of joining,
  // so threads that retire early need no bookkeeping.
  std::thread([this] { Work(); }).detach();
}

void ElasticThreadPool::enqueue(std::function<void()> fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  jobs_.push_back(std::move(fn));
  if (idle_ >= jobs_.size()) {
    work_.notify_one();
  } else if (threads_ < max_threads_ && !shutdown_) {
    Spawn();
  }
}

void ElasticThreadPool::shutdown() {
  std::unique_lock<std::mutex> lock(mutex_);
  shutdown_ = true;
  work_.notify_all();
  all_exited_.wait(lock, [this] { return threads_ == 0; });
}

void ElasticThreadPool::Work() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    const bool woke = work_.wait_for(lock, idle_exit_, [this] { return !jobs_.empty() || shutdown_; });
    --idle_;
    if (!jobs_.empty()) {
      auto fn = std::move(jobs_.front());
      jobs_.pop_front();
      lock.unlock();
      fn();
      lock.lock();
      ++idle_;
      continue;
    }
    if (shutdown_ || (!woke && threads_ > min_threads_)) break;
    ++idle_;
  }
  if (--threads_ == 0) all_exited_.notify_all();
}

std::size_t ElasticThreadPool::threads() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return threads_;
}

std::size_t ElasticThreadPool::busy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return threads_ - idle_;
}

std::size_t ElasticThreadPool::queued() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return jobs_.size();
}

}  // namespace ray_webhook
