#include "ray_webhook/core/decode/review_decoder_pool.h"

#include <iterator>
#include <utility>

namespace ray_webhook {

ReviewDecoderPool::Lease ReviewDecoderPool::Acquire() {
  {
    MutexLock lock(&mutex_);
    if (!free_.empty()) {
      std::unique_ptr<ReviewDecoder> d = std::move(free_.back().decoder);
      free_.pop_back();
      return Lease(this, std::move(d));
    }
    ++created_;
  }
  // Outside the lock: a new decoder allocates its parser's buffers.
  return Lease(this, std::make_unique<ReviewDecoder>());
}

void ReviewDecoderPool::Return(std::unique_ptr<ReviewDecoder> d) {
  MutexLock lock(&mutex_);
  free_.push_back(Idle{std::move(d), true});
}

std::size_t ReviewDecoderPool::ShrinkIdle() {
  std::vector<Idle> grown;
  {
    MutexLock lock(&mutex_);
    for (Idle& idle : free_) {
      if (!idle.lent_since_shrink && idle.decoder->capacity() > ReviewDecoder::kDefaultCapacity) {
        grown.push_back(Idle{std::move(idle.decoder), false});
      }
      idle.lent_since_shrink = false;
    }
    std::erase_if(free_, [](const Idle& idle) { return !idle.decoder; });
  }
  if (grown.empty()) return 0;
  // Outside the lock, which Acquire() needs: shrinking frees megabytes. A review
  // arriving meanwhile gets another decoder or a new one.
  for (Idle& idle : grown) idle.decoder->ShrinkToDefault();
  MutexLock lock(&mutex_);
  // At the front: the decoders used longest ago, handed out last.
  free_.insert(free_.begin(), std::make_move_iterator(grown.begin()), std::make_move_iterator(grown.end()));
  return grown.size();
}

std::size_t ReviewDecoderPool::created() const {
  MutexLock lock(&mutex_);
  return created_;
}

}  // namespace ray_webhook
