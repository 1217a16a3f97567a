#include "ray_webhook/review_decoder_pool.h"

namespace ray_webhook {

ReviewDecoderPool::Lease ReviewDecoderPool::Acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_.empty()) {
      std::unique_ptr<ReviewDecoder> d = std::move(free_.back());
      free_.pop_back();
      return Lease(this, std::move(d));
    }
    ++created_;
  }
  // Outside the lock: a new decoder allocates its parser's buffers.
  return Lease(this, std::make_unique<ReviewDecoder>());
}

void ReviewDecoderPool::Return(std::unique_ptr<ReviewDecoder> d) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_.push_back(std::move(d));
}

std::size_t ReviewDecoderPool::created() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return created_;
}

}  // namespace ray_webhook
