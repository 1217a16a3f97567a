#include "ray_webhook/net/blocking_pool.h"

#include <algorithm>
#include <system_error>

namespace ray_webhook {

BlockingPool::BlockingPool(std::size_t max) : max_(std::max<std::size_t>(max, 1)) {}

BlockingPool::~BlockingPool() { Stop(); }

void BlockingPool::Submit(std::function<void()> job) {
  MutexLock lock(&mutex_);
  jobs_.push_back(std::move(job));
  if (idle_ == 0 && threads_.size() < max_) {
    try {
      threads_.emplace_back([this] { Work(); });
    } catch (const std::system_error&) {
      // Out of threads: the job waits for a worker there is.
    }
  }
  ready_.notify_one();
}

void BlockingPool::Stop() {
  std::vector<std::thread> threads;
  {
    MutexLock lock(&mutex_);
    stopping_ = true;
    threads.swap(threads_);
  }
  ready_.notify_all();
  for (std::thread& t : threads) t.join();
}

std::size_t BlockingPool::size() const {
  MutexLock lock(&mutex_);
  return threads_.size();
}

void BlockingPool::Work() {
  MutexLock lock(&mutex_);
  for (;;) {
    ++idle_;
    while (jobs_.empty() && !stopping_) lock.Wait(ready_);
    --idle_;
    if (jobs_.empty()) return;
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.Unlock();
    job();
    lock.Lock();
  }
}

}  // namespace ray_webhook
