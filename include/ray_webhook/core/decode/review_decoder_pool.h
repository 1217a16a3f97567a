// ReviewDecoderPool: the server's decoders, shared by its connection threads
// and handed out most recently used first.
//
// Contract: Acquire() lends a decoder that no other lease holds until the
// lease is destroyed, and makes a new one when none is free. The pool keeps
// as many decoders as reviews ever ran at once, not one per connection thread
// (the server keeps 64 threads or more, and a decoder's buffers are tens of
// kilobytes once touched). Leases come back last in, first out, so on a busy
// core the next review reuses the buffers the last one left in the CPU's
// caches. ShrinkIdle() gives back what large bodies grew in decoders that sat
// unused since its previous call; called periodically, it keeps decoders grown
// while large reviews keep coming and returns their memory once they stop.
// Thread-safe; the lock covers only pointer moves, never an allocation or a
// free of a decoder's buffers. The pool must outlive its leases.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "ray_webhook/core/decode/review_decoder.h"
#include "ray_webhook/mutex.h"

namespace ray_webhook {

class ReviewDecoderPool {
 public:
  class Lease {
   public:
    Lease(Lease&& other) noexcept : pool_(other.pool_), decoder_(std::move(other.decoder_)) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (decoder_) pool_->Return(std::move(decoder_));
    }
    ReviewDecoder& operator*() const { return *decoder_; }
    ReviewDecoder* operator->() const { return decoder_.get(); }

   private:
    friend class ReviewDecoderPool;
    Lease(ReviewDecoderPool* pool, std::unique_ptr<ReviewDecoder> d) : pool_(pool), decoder_(std::move(d)) {}
    ReviewDecoderPool* pool_;
    std::unique_ptr<ReviewDecoder> decoder_;
  };

  Lease Acquire() EXCLUDES(mutex_);

  // Shrinks (ReviewDecoder::ShrinkToDefault) every free decoder that grew and
  // was not lent since the previous call. Returns how many it shrank.
  std::size_t ShrinkIdle() EXCLUDES(mutex_);

  // Decoders made so far: the most reviews that ran at once.
  std::size_t created() const EXCLUDES(mutex_);

 private:
  struct Idle {
    std::unique_ptr<ReviewDecoder> decoder;
    bool lent_since_shrink;  // lent since the last ShrinkIdle()
  };

  void Return(std::unique_ptr<ReviewDecoder> d) EXCLUDES(mutex_);

  mutable Mutex mutex_;
  std::vector<Idle> free_ GUARDED_BY(mutex_);  // back is the most recently returned
  std::size_t created_ GUARDED_BY(mutex_) = 0;
};

}  // namespace ray_webhook
