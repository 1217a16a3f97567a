#include "ray_webhook/server/lookup_deadline.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

using namespace std::chrono_literals;

TEST(ParseGoDurationTest, ReadsWhatTimeDurationStringPrints) {
  EXPECT_EQ(ParseGoDuration("10s"), std::chrono::microseconds(10s));
  EXPECT_EQ(ParseGoDuration("1m30s"), std::chrono::microseconds(90s));
  EXPECT_EQ(ParseGoDuration("1.5s"), std::chrono::microseconds(1500ms));
  EXPECT_EQ(ParseGoDuration("500ms"), std::chrono::microseconds(500ms));
  EXPECT_EQ(ParseGoDuration("250us"), std::chrono::microseconds(250));
  EXPECT_EQ(ParseGoDuration("1h0m0s"), std::chrono::microseconds(1h));
}

TEST(ParseGoDurationTest, RefusesWhatIsNotADuration) {
  for (const char* bad : {"", "10", "s", "-1s", "1x", "1.s.", "0s", "10 s", "9999999h"}) {
    EXPECT_FALSE(ParseGoDuration(bad)) << bad;
  }
}

// kube-apiserver appends ?timeout=<timeoutSeconds>s (staging/src/k8s.io/apiserver/pkg/util/webhook/webhook.go).
TEST(LookupDeadlineTest, LeavesTheApiServerAMarginOfItsOwnTimeout) {
  EXPECT_EQ(LookupDeadline("10s", 30s), 9s);     // margin 1 s at most
  EXPECT_EQ(LookupDeadline("2s", 30s), 1500ms);  // a quarter of it
  EXPECT_EQ(LookupDeadline("1s", 30s), 750ms);
  EXPECT_EQ(LookupDeadline("10s", 2s), 2s);  // the flag when it is smaller
}

TEST(LookupDeadlineTest, WithoutAUsableTimeoutTheFlagDecides) {
  EXPECT_EQ(LookupDeadline("", 2s), 2s);
  EXPECT_EQ(LookupDeadline("soon", 2s), 2s);
}

}  // namespace
}  // namespace ray_webhook
