#include "ray_webhook/mutex.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <thread>

namespace ray_webhook {
namespace {

struct Counter {
  Mutex mutex;
  int value GUARDED_BY(mutex) = 0;
  bool ready GUARDED_BY(mutex) = false;
};

TEST(Mutex, MutexLockExcludesOtherThreadsUntilDestroyed) {
  Counter c;
  constexpr int kRounds = 20000;
  auto add = [&c] {
    for (int i = 0; i < kRounds; ++i) {
      MutexLock lock(&c.mutex);
      ++c.value;
    }
  };
  std::thread a(add), b(add);
  a.join();
  b.join();
  MutexLock lock(&c.mutex);
  EXPECT_EQ(c.value, 2 * kRounds);
}

// Between Unlock() and Lock() another thread gets in; the destructor then
// gives back only a lock it holds.
TEST(Mutex, UnlockLetsOthersInAndLockTakesItBack) {
  Counter c;
  {
    MutexLock lock(&c.mutex);
    c.value = 1;
    lock.Unlock();
    std::thread other([&c] {
      MutexLock inner(&c.mutex);
      c.value = 2;
    });
    other.join();
    lock.Lock();
    EXPECT_EQ(c.value, 2);
    lock.Unlock();
  }
  MutexLock again(&c.mutex);  // not left locked by the scope above
  EXPECT_EQ(c.value, 2);
}

TEST(Mutex, WaitUntilReleasesTheLockWhileWaitingAndHoldsItAfter) {
  Counter c;
  std::condition_variable cv;
  std::thread setter([&] {
    MutexLock lock(&c.mutex);  // gets in only while the waiter waits
    c.ready = true;
    cv.notify_one();
  });
  {
    MutexLock lock(&c.mutex);
    const auto far = std::chrono::steady_clock::now() + std::chrono::hours(1);
    while (!c.ready) lock.WaitUntil(cv, far);
    c.value = 3;  // still held
  }
  setter.join();
  MutexLock lock(&c.mutex);
  EXPECT_EQ(c.value, 3);
  // A deadline already past times out, and the lock is held again after it.
  EXPECT_EQ(lock.WaitUntil(cv, std::chrono::steady_clock::now() - std::chrono::seconds(1)), std::cv_status::timeout);
  c.value = 4;
  EXPECT_EQ(c.value, 4);
}

}  // namespace
}  // namespace ray_webhook
