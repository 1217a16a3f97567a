#include "ray_webhook/core/decode/review_decoder_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "support/decoded_request.h"
#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

using testing::ReadFixture;

TEST(ReviewDecoderPool, OneReviewAtATimeReusesOneDecoder) {
  ReviewDecoderPool pool;
  ReviewDecoder* first = nullptr;
  for (int i = 0; i < 5; ++i) {
    ReviewDecoderPool::Lease lease = pool.Acquire();
    if (first == nullptr) first = &*lease;
    EXPECT_EQ(&*lease, first);
  }
  EXPECT_EQ(pool.created(), 1u);
}

TEST(ReviewDecoderPool, HeldDecodersAreNeverSharedAndComeBackLastInFirstOut) {
  ReviewDecoderPool pool;
  ReviewDecoder* a = nullptr;
  ReviewDecoder* b = nullptr;
  {
    ReviewDecoderPool::Lease la = pool.Acquire();
    ReviewDecoderPool::Lease lb = pool.Acquire();
    a = &*la;
    b = &*lb;
    EXPECT_NE(a, b);
  }  // lb is returned first, then la: la is now the most recent
  EXPECT_EQ(&*pool.Acquire(), a);
  EXPECT_EQ(pool.created(), 2u);
}

TEST(ReviewDecoderPool, AMovedLeaseReturnsItsDecoderOnce) {
  ReviewDecoderPool pool;
  {
    ReviewDecoderPool::Lease la = pool.Acquire();
    ReviewDecoderPool::Lease moved(std::move(la));
  }
  ReviewDecoderPool::Lease x = pool.Acquire();
  ReviewDecoderPool::Lease y = pool.Acquire();  // a second lease needs a second decoder
  EXPECT_NE(&*x, &*y);
  EXPECT_EQ(pool.created(), 2u);
}

TEST(ReviewDecoderPool, ConcurrentReviewsEachDecodeTheirOwnBody) {
  ReviewDecoderPool pool;
  const std::string worker = ReadFixture("reviews/kuberay-1.0-worker-short.json");
  const std::string head = ReadFixture("reviews/head-generate-name-only.json");
  constexpr int kThreads = 8;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string& body = t % 2 == 0 ? worker : head;
      const std::string_view want = t % 2 == 0 ? "worker" : "head";
      for (int i = 0; i < 200; ++i) {
        ReviewDecoderPool::Lease lease = pool.Acquire();
        Decoded r = lease->Decode(body);
        if (!RequestOf(r) || !RequestOf(r)->pod ||
            Lookup(RequestOf(r)->pod->metadata.labels, "ray.io/node-type") != want) {
          ++wrong;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_GE(pool.created(), 1u);
  EXPECT_LE(pool.created(), static_cast<std::size_t>(kThreads));
}

TEST(ReviewDecoderPool, ShrinkIdleShrinksGrownDecodersLeftUnusedSinceTheCallBefore) {
  ReviewDecoderPool pool;
  const std::string large = testing::PaddedReview("reviews/kuberay-1.0-worker-short.json", 300 * 1024);
  ReviewDecoder* grown = nullptr;
  {
    ReviewDecoderPool::Lease lease = pool.Acquire();
    ASSERT_TRUE(RequestOf(lease->Decode(large)));
    grown = &*lease;
  }
  EXPECT_EQ(pool.ShrinkIdle(), 0u);  // lent since the last call (there was none)
  {
    ReviewDecoderPool::Lease lease = pool.Acquire();  // large reviews keep coming
    EXPECT_EQ(&*lease, grown);
    EXPECT_GE(lease->capacity(), large.size());
  }
  EXPECT_EQ(pool.ShrinkIdle(), 0u);
  EXPECT_EQ(pool.ShrinkIdle(), 1u);  // idle for a whole period: shrunk
  EXPECT_EQ(pool.ShrinkIdle(), 0u);  // and only once
  ReviewDecoderPool::Lease lease = pool.Acquire();
  EXPECT_EQ(&*lease, grown);
  EXPECT_EQ(lease->capacity(), ReviewDecoder::kDefaultCapacity);
  EXPECT_TRUE(RequestOf(lease->Decode(large)));
  EXPECT_EQ(pool.created(), 1u);
}

TEST(ReviewDecoderPool, ShrunkDecodersAreHandedOutLast) {
  ReviewDecoderPool pool;
  const std::string large = testing::PaddedReview("reviews/kuberay-1.0-worker-short.json", 300 * 1024);
  ReviewDecoder* grown = nullptr;
  ReviewDecoder* small = nullptr;
  {
    ReviewDecoderPool::Lease a = pool.Acquire();
    ReviewDecoderPool::Lease b = pool.Acquire();
    ASSERT_TRUE(a->Decode(large).ok());
    grown = &*a;
    small = &*b;
  }  // b returns first, then a: a would be handed out next
  pool.ShrinkIdle();
  EXPECT_EQ(pool.ShrinkIdle(), 1u);
  ReviewDecoderPool::Lease first = pool.Acquire();
  ReviewDecoderPool::Lease second = pool.Acquire();
  EXPECT_EQ(&*first, small);
  EXPECT_EQ(&*second, grown);
}

}  // namespace
}  // namespace ray_webhook
