// Mutex and MutexLock: std::mutex and its scoped lock, annotated so that
// clang's -Wthread-safety checks every member declared GUARDED_BY a Mutex.
//
// Contract: Mutex behaves as std::mutex (not recursive, not copyable) and
// MutexLock as std::unique_lock over it: the lock is held from construction
// to destruction, except between an Unlock() and the next Lock(). libstdc++'s
// std::mutex carries no capability attributes, so without these wrappers the
// analysis would see no lock at all. A condition variable waits through
// MutexLock::WaitUntil, which the analysis takes as holding the lock
// throughout, as the caller's code may assume. No cost over std::mutex: every
// member is inline.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

#include "ray_webhook/thread_annotations.h"

namespace ray_webhook {

class CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ACQUIRE() { mutex_.lock(); }
  void Unlock() RELEASE() { mutex_.unlock(); }

 private:
  friend class MutexLock;
  std::mutex mutex_;
};

class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_->Lock(); }
  ~MutexLock() RELEASE() {
    if (locked_) mutex_->Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  // Lets others in for a while, e.g. around slow work the lock need not cover.
  void Unlock() RELEASE() {
    mutex_->Unlock();
    locked_ = false;
  }
  void Lock() ACQUIRE() {
    mutex_->Lock();
    locked_ = true;
  }

  // cv.wait on the held lock: released while waiting, held again on return
  // (a wake-up may be spurious: the caller checks its condition again).
  void Wait(std::condition_variable& cv) {
    std::unique_lock<std::mutex> lock(mutex_->mutex_, std::adopt_lock);
    cv.wait(lock);
    lock.release();  // still held, and still this MutexLock's
  }

  // cv.wait_until on the held lock: released while waiting, held again on return.
  template <typename Clock, typename Duration>
  std::cv_status WaitUntil(std::condition_variable& cv, const std::chrono::time_point<Clock, Duration>& deadline) {
    std::unique_lock<std::mutex> lock(mutex_->mutex_, std::adopt_lock);
    const std::cv_status status = cv.wait_until(lock, deadline);
    lock.release();  // still held, and still this MutexLock's
    return status;
  }

 private:
  Mutex* const mutex_;
  bool locked_ = true;
};

}  // namespace ray_webhook
