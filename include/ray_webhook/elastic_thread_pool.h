// ElasticThreadPool: cpp-httplib's task queue, grown on demand.
//
// Contract: cpp-httplib runs each connection, keep-alive included, as one task
// that holds a thread for the connection's life. A fixed pool of N threads
// therefore serves only N connections, and idle keep-alive connections from
// several API servers could take every thread. This pool starts a thread for
// a task whenever none is idle, up to max_threads; beyond that tasks wait in
// order. Threads above min_threads exit after idle_exit without work.
// shutdown() runs every queued task and joins all threads. Thread-safe.
#pragma once

#include <httplib.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

namespace ray_webhook {

class ElasticThreadPool : public httplib::TaskQueue {
 public:
  ElasticThreadPool(std::size_t min_threads, std::size_t max_threads, std::chrono::milliseconds idle_exit);
  ~ElasticThreadPool() override;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

  std::size_t threads() const;
  std::size_t busy() const;
  std::size_t queued() const;

 private:
  void Spawn();  // with mutex_ held
  void Work();

  const std::size_t min_threads_;
  const std::size_t max_threads_;
  const std::chrono::milliseconds idle_exit_;
  mutable std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable all_exited_;
  std::deque<std::function<void()>> jobs_;
  std::size_t threads_ = 0;
  std::size_t idle_ = 0;
  bool shutdown_ = false;
};

}  // namespace ray_webhook
