#include "ray_webhook/server/current_policy.h"

namespace ray_webhook {

CurrentPolicy::CurrentPolicy(const PolicyConfig& initial) {
  MutexLock lock(&mutex_);
  kept_.push_back(initial);
  current_.store(&kept_.back(), std::memory_order_release);
}

bool CurrentPolicy::SetTarget(const KubeRayTarget& target) {
  MutexLock lock(&mutex_);
  for (const PolicyConfig& p : kept_) {
    if (p.kuberay.version == target.version && p.kuberay.feature_gates == target.feature_gates) {
      current_.store(&p, std::memory_order_release);
      return true;
    }
  }
  if (kept_.size() >= kMaxKept) return false;
  PolicyConfig next = kept_.front();
  next.kuberay = target;
  kept_.push_back(std::move(next));
  current_.store(&kept_.back(), std::memory_order_release);
  return true;
}

}  // namespace ray_webhook
