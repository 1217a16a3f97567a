#include "ray_webhook/elastic_thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace ray_webhook {
namespace {

using namespace std::chrono_literals;

// A task that holds its thread until released, as a keep-alive connection does.
class Gate {
 public:
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    ++waiting_;
    changed_.notify_all();
    changed_.wait(lock, [this] { return open_; });
  }
  void Open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    changed_.notify_all();
  }
  bool AwaitWaiting(int n) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, 10s, [&] { return waiting_ >= n; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  int waiting_ = 0;
  bool open_ = false;
};

TEST(ElasticThreadPool, GrowsPastItsReadyThreadsForHeldConnections) {
  ElasticThreadPool pool(2, 32, 60s);
  Gate gate;
  for (int i = 0; i < 20; ++i) pool.enqueue([&] { gate.Wait(); });
  ASSERT_TRUE(gate.AwaitWaiting(20)) << "20 held tasks need 20 threads at once";
  // The two ready threads take the first two tasks even if they were not yet
  // scheduled when those arrived, so exactly one thread per held task.
  EXPECT_EQ(pool.threads(), 20u);
  EXPECT_EQ(pool.busy(), 20u);
  gate.Open();
  pool.shutdown();
  EXPECT_EQ(pool.threads(), 0u);
}

TEST(ElasticThreadPool, BeyondTheCapTasksWaitTheirTurn) {
  ElasticThreadPool pool(1, 4, 60s);
  Gate gate;
  std::atomic<int> done{0};
  for (int i = 0; i < 10; ++i) {
    pool.enqueue([&] {
      gate.Wait();
      ++done;
    });
  }
  ASSERT_TRUE(gate.AwaitWaiting(4));
  EXPECT_EQ(pool.threads(), 4u);
  EXPECT_EQ(pool.queued(), 6u);
  gate.Open();
  pool.shutdown();  // runs every queued task before returning
  EXPECT_EQ(done.load(), 10);
}

TEST(ElasticThreadPool, ExtraThreadsRetireWhenIdle) {
  ElasticThreadPool pool(1, 8, 50ms);
  Gate gate;
  for (int i = 0; i < 6; ++i) pool.enqueue([&] { gate.Wait(); });
  ASSERT_TRUE(gate.AwaitWaiting(6));
  gate.Open();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (pool.threads() > 1 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
  EXPECT_EQ(pool.threads(), 1u);
  pool.shutdown();
}

}  // namespace
}  // namespace ray_webhook
