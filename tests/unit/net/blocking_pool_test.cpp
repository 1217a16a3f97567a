#include "ray_webhook/net/blocking_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>

namespace ray_webhook {
namespace {

TEST(BlockingPool, StopRunsEveryQueuedJob) {
  BlockingPool pool(2);
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i) pool.Submit([&] { ran.fetch_add(1); });
  pool.Stop();
  EXPECT_EQ(ran.load(), 50);
  EXPECT_EQ(pool.size(), 0u) << "joined";
}

// Jobs that wait on one another need as many workers as wait at once, and no more than max are started.
TEST(BlockingPool, StartsWorkersOnDemandUpToItsMaximum) {
  BlockingPool pool(3);
  std::mutex m;
  std::condition_variable cv;
  int started = 0;
  bool release = false;
  for (int i = 0; i < 3; ++i) {
    pool.Submit([&] {
      std::unique_lock<std::mutex> lock(m);
      ++started;
      cv.notify_all();
      cv.wait(lock, [&] { return release; });
    });
  }
  {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return started == 3; });
  }
  EXPECT_EQ(pool.size(), 3u) << "three jobs ran at once";
  std::atomic<bool> queued_ran{false};
  pool.Submit([&] { queued_ran = true; });
  EXPECT_EQ(pool.size(), 3u) << "no fourth worker beyond the maximum";
  {
    std::lock_guard<std::mutex> lock(m);
    release = true;
  }
  cv.notify_all();
  pool.Stop();
  EXPECT_TRUE(queued_ran.load());
}

}  // namespace
}  // namespace ray_webhook
