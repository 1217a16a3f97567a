#include "ray_webhook/review_decoder_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "fixture_files.h"

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
        DecodeResult r = lease->Decode(body);
        if (!r.request || !r.request->pod || Lookup(r.request->pod->metadata.labels, "ray.io/node-type") != want) {
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

}  // namespace
}  // namespace ray_webhook
