#include "ray_webhook/server/route.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

constexpr std::string_view kJson = "application/json";

TEST(Route, ReviewsArePostsOfJsonOnTheWebhookPort) {
  EXPECT_EQ(RouteOf("POST", "/mutate", kJson, true).kind, Route::kMutate);
  EXPECT_EQ(RouteOf("POST", "/validate", "Application/JSON; charset=utf-8", true).kind, Route::kValidate);
  EXPECT_EQ(RouteOf("POST", "/admit", kJson, true).kind, Route::kAdmit);
  EXPECT_EQ(RouteOf("POST", "/admit", kJson, false).refusal.status, 404);
  const Route not_json = RouteOf("POST", "/mutate", "text/plain", true);
  EXPECT_EQ(not_json.kind, Route::kRefused);
  EXPECT_EQ(not_json.refusal.status, 415);
  const Route get = RouteOf("GET", "/validate", "", true);
  EXPECT_EQ(get.refusal.status, 405);
  EXPECT_EQ(get.refusal.allow, "POST");
}

TEST(Route, ProbesAndMetricsTakeGetAndHead) {
  EXPECT_EQ(RouteOf("GET", "/healthz", "", true).kind, Route::kProbe);
  EXPECT_EQ(RouteOf("HEAD", "/readyz", "", false).kind, Route::kProbe);
  EXPECT_EQ(RouteOf("GET", "/metrics", "", true).kind, Route::kMetrics);
  const Route post = RouteOf("POST", "/healthz", kJson, true);
  EXPECT_EQ(post.refusal.status, 405);
  EXPECT_EQ(post.refusal.allow, "GET, HEAD");
}

TEST(Route, TheProbePortServesTheProbesAlone) {
  EXPECT_EQ(RouteOf("GET", "/metrics", "", false).refusal.status, 404);
  EXPECT_EQ(RouteOf("POST", "/mutate", kJson, false).refusal.status, 404);
}

TEST(Route, AnUnknownPathIs404NamingIt) {
  const Route r = RouteOf("GET", "/nope", "", true);
  EXPECT_EQ(r.refusal.status, 404);
  EXPECT_EQ(r.refusal.message, "no such path: /nope");
}

TEST(Route, PathsArePercentDecoded) {
  EXPECT_EQ(DecodedPath("/mut%61te"), "/mutate");
  EXPECT_EQ(DecodedPath("/a%2"), "/a%2");
  EXPECT_EQ(DecodedPath("/a+b"), "/a+b");
}

TEST(Route, TheTimeoutParameterIsTheFirstOneDecoded) {
  EXPECT_EQ(TimeoutParam("/validate?timeout=10s"), "10s");
  EXPECT_EQ(TimeoutParam("/validate?x=1&timeout=1%2E5s&timeout=9s"), "1.5s");
  EXPECT_EQ(TimeoutParam("/validate?timeouts=3s"), "");
  EXPECT_EQ(TimeoutParam("/validate"), "");
}

}  // namespace
}  // namespace ray_webhook
