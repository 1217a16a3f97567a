#include "ray_webhook/core/review/review_handler.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

using testing::ReadFixture;

// A review holds its policy until it is finished: one that outlives them all.
const PolicyConfig kPolicy{};

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

// A review that needs no cluster fact is decided in the one step.
TEST(ReviewHandler, PrepareDecidesAtOnceWhenNoLookupIsNeeded) {
  ReviewDecoder decoder;
  const std::string worker = ReadFixture("reviews/kuberay-0.4-worker.json");
  PreparedReview review = PrepareReview(worker, Endpoint::kMutate, kPolicy, decoder, true);
  ASSERT_TRUE(review.done());
  EXPECT_EQ(review.outcome().http_status, 200);
  EXPECT_FALSE(review.outcome().looked_up_heads);
  EXPECT_FALSE(review.outcome().decision.patch.empty());
  EXPECT_EQ(nlohmann::json::parse(review.outcome().body)["kind"], "AdmissionReview");
}

TEST(ReviewHandler, PrepareAnswersABadBodyAtOnce) {
  ReviewDecoder decoder;
  PreparedReview review = PrepareReview("{", Endpoint::kValidate, kPolicy, decoder, true);
  ASSERT_TRUE(review.done());
  EXPECT_EQ(review.outcome().http_status, 400);
}

// A head Pod on /validate stops before the decision, says which lookup it
// waits for, and is decided by Finish on the request the first step decoded.
TEST(ReviewHandler, PrepareStopsForTheHeadLookupAndFinishDecides) {
  ReviewDecoder decoder;
  const std::string head = ReadFixture("reviews/head-already-named.json");
  PreparedReview review = PrepareReview(head, Endpoint::kValidate, kPolicy, decoder, true);
  ASSERT_FALSE(review.done());
  EXPECT_EQ(review.heads_wanted().namespace_name, "default");
  EXPECT_EQ(review.heads_wanted().cluster, "raycluster-kuberay");
  EXPECT_TRUE(review.outcome().body.empty());
  review.Finish(HeadPodList(std::vector<HeadPod>{{"raycluster-kuberay-head-old", "Running", false}}));
  ASSERT_TRUE(review.done());
  EXPECT_TRUE(review.outcome().looked_up_heads);
  EXPECT_EQ(review.outcome().http_status, 200);
  EXPECT_FALSE(review.outcome().decision.allowed);
  EXPECT_EQ(review.outcome().decision.denial.code, 409);
  const auto j = nlohmann::json::parse(review.outcome().body);
  EXPECT_EQ(j["response"]["allowed"], false);
  EXPECT_EQ(j["response"]["uid"], std::string(review.outcome().uid));
}

// No head Pods yet: the same review is allowed.
TEST(ReviewHandler, FinishWithNoHeadsAllows) {
  ReviewDecoder decoder;
  const std::string head = ReadFixture("reviews/head-already-named.json");
  PreparedReview review = PrepareReview(head, Endpoint::kValidate, kPolicy, decoder, true);
  ASSERT_FALSE(review.done());
  review.Finish(HeadPodList(std::vector<HeadPod>{}));
  EXPECT_TRUE(review.outcome().decision.allowed);
}

// Without a way to look heads up, the review is decided in one step, as PodPolicy decides without them.
TEST(ReviewHandler, PrepareWithoutALookupNeverWaits) {
  ReviewDecoder decoder;
  const std::string head = ReadFixture("reviews/head-already-named.json");
  PreparedReview review = PrepareReview(head, Endpoint::kValidate, kPolicy, decoder, false);
  ASSERT_TRUE(review.done());
  EXPECT_FALSE(review.outcome().looked_up_heads);
  EXPECT_EQ(review.outcome().http_status, 200);
}

}  // namespace
}  // namespace ray_webhook
