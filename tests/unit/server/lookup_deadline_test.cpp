#include "ray_webhook/server/lookup_deadline.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

using namespace std::chrono_literals;

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
  for (const char* unusable : {"10", "-1s", "0s", "100ns", "25h"})
    EXPECT_EQ(LookupDeadline(unusable, 2s), 2s) << unusable;
  EXPECT_EQ(LookupDeadline("1m30s", 2min), 89s);
}

}  // namespace
}  // namespace ray_webhook
