#include "ray_webhook/core/review_handler.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

using testing::ReadFixture;

TEST(ReviewHandler, BadBodyIs400WithStatusBody) {
  ReviewDecoder decoder;
  const ReviewOutcome out = HandleReview("{", Endpoint::kMutate, PolicyConfig{}, decoder);
  EXPECT_EQ(out.http_status, 400);
  const auto j = nlohmann::json::parse(out.body);
  EXPECT_EQ(j["kind"], "Status");
  EXPECT_EQ(j["code"], 400);
  EXPECT_NE(j["message"].get<std::string>().find("not valid JSON"), std::string::npos);
}

TEST(ReviewHandler, SummaryNamesTheReview) {
  ReviewDecoder decoder;
  const std::string body = ReadFixture("reviews/kuberay-0.4-worker.json");
  const ReviewOutcome out = HandleReview(body, Endpoint::kMutate, PolicyConfig{}, decoder);
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
    EXPECT_EQ(HandleReview("not json", Endpoint::kMutate, PolicyConfig{}, decoder).http_status, 400);
    EXPECT_EQ(HandleReview(good, Endpoint::kMutate, PolicyConfig{}, decoder).http_status, 200);
  }
}

TEST(ReviewHandler, LookupIsCalledOnlyWhenTheRulesNeedIt) {
  ReviewDecoder decoder;
  PolicyConfig config;
  int calls = 0;
  std::string seen_ns, seen_cluster;
  HeadLookup lookup = [&](std::string_view ns, std::string_view cluster) {
    ++calls;
    seen_ns = ns;
    seen_cluster = cluster;
    return HeadPodList(std::vector<HeadPod>{{"raycluster-kuberay-head-old", "Running", false}});
  };
  const std::string head = ReadFixture("reviews/head-already-named.json");
  EXPECT_EQ(HandleReview(head, Endpoint::kMutate, config, decoder, lookup).http_status, 200);
  EXPECT_EQ(calls, 0);
  const ReviewOutcome out = HandleReview(head, Endpoint::kValidate, config, decoder, lookup);
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(out.looked_up_heads);
  EXPECT_EQ(seen_ns, "default");
  EXPECT_EQ(seen_cluster, "raycluster-kuberay");
  EXPECT_FALSE(out.decision.allowed);
  EXPECT_EQ(out.decision.denial.code, 409);
  HandleReview(ReadFixture("reviews/kuberay-1.7-worker.json"), Endpoint::kValidate, config, decoder, lookup);
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace ray_webhook
