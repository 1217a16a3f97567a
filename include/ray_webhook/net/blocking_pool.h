// BlockingPool: the threads on which work that may wait runs (the
// Kubernetes API lookup), so that the event loops never do.
//
// Contract: Submit queues a job and starts a worker when none is idle, up to
// max; workers stay until Stop(). When no thread can be started the job
// waits for a worker there is (at least one exists once any was started).
// Stop, after the last Submit, runs what is queued and joins the workers.
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "ray_webhook/mutex.h"
#include "ray_webhook/thread_annotations.h"

namespace ray_webhook {

class BlockingPool {
 public:
  explicit BlockingPool(std::size_t max);
  ~BlockingPool();
  BlockingPool(const BlockingPool&) = delete;
  BlockingPool& operator=(const BlockingPool&) = delete;

  void Submit(std::function<void()> job);
  void Stop();
  // Workers started so far.
  std::size_t size() const;

 private:
  void Work();

  const std::size_t max_;
  mutable Mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_ GUARDED_BY(mutex_);
  std::vector<std::thread> threads_ GUARDED_BY(mutex_);
  std::size_t idle_ GUARDED_BY(mutex_) = 0;
  bool stopping_ GUARDED_BY(mutex_) = false;
};

}  // namespace ray_webhook
