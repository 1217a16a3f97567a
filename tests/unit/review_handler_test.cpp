#include "ray_webhook/review_handler.h"

#include <gtest/gtest.h>

#include "fixture_files.h"


namespace ray_webhook {
namespace {

using testing::ReadFixture;

TEST(ReviewHandler, BadBodyIs400WithStatusBody) {
  ReviewDecoder decoder;
  const ReviewOutcome out = HandleReview("{", Endpoint::kMutate, Config{}, decoder);
  EXPECT_EQ(out.http_status, 400);
  const auto j = nlohmann::json::parse(out.body);
  EXPECT_EQ(j["kind"], "Status");
  EXPECT_EQ(j["code"], 400);
  EXPECT_NE(j["message"].get<std::string>().find("not valid JSON"), std::string::npos);
}

TEST(ReviewHandler, SummaryNamesTheReview) {
  ReviewDecoder decoder;
  const std::string body = ReadFixture("reviews/kuberay-0.4-worker.json");
  const ReviewOutcome out = HandleReview(body, Endpoint::kMutate, Config{}, decoder);
  ASSERT_EQ(out.http_status, 200);
  EXPECT_FALSE(out.uid.empty());
  EXPECT_EQ(out.namespace_name, "default");
  EXPECT_EQ(out.cluster, "raycluster-kuberay");
  EXPECT_FALSE(out.pod_name.empty());
  EXPECT_FALSE(out.decision.patch.empty());
}

// One decoder is reused across requests on a server thread.
TEST(ReviewHandler, DecoderIsReusableAfterErrors) {
  ReviewDecoder decoder;
  const std::string good = ReadFixture("reviews/kuberay-0.4-worker.json");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(HandleReview("not json", Endpoint::kMutate, Config{}, decoder).http_status, 400);
    EXPECT_EQ(HandleReview(good, Endpoint::kMutate, Config{}, decoder).http_status, 200);
  }
}

}  // namespace
}  // namespace ray_webhook
