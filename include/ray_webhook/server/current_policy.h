// CurrentPolicy: the review policy in force, which `--kuberay-version auto`
// replaces while serving when the KubeRay operator's release changes.
//
// Contract: Get() is one atomic load, safe from any thread, and the policy it
// returns stays valid for the life of the CurrentPolicy: every policy ever
// put in force is kept, so a review that started under one finishes under
// it (a deferred lookup included). A target equal to one kept is served by
// that one, so the keep grows only with distinct releases and gates; past
// kMaxKept distinct ones the policy in force stays and SetTarget returns
// false. SetTarget may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <deque>

#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/mutex.h"
#include "ray_webhook/thread_annotations.h"

namespace ray_webhook {

class CurrentPolicy {
 public:
  static constexpr std::size_t kMaxKept = 64;

  explicit CurrentPolicy(const PolicyConfig& initial);
  CurrentPolicy(const CurrentPolicy&) = delete;
  CurrentPolicy& operator=(const CurrentPolicy&) = delete;

  const PolicyConfig& Get() const { return *current_.load(std::memory_order_acquire); }

  // The policy with `target` as its KubeRay release and gates, everything else as given at start.
  bool SetTarget(const KubeRayTarget& target);

 private:
  Mutex mutex_;
  std::deque<PolicyConfig> kept_ GUARDED_BY(mutex_);  // a deque never moves what it holds
  std::atomic<const PolicyConfig*> current_;
};

}  // namespace ray_webhook
