#include "ray_webhook/server/review_path.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

using testing::ReadFixture;

std::string Request(const std::string& target, std::size_t length) {
  return "POST " + target + " HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(length) +
         "\r\n\r\n";
}

class ReviewPathTest : public ::testing::Test {
 protected:
  Handled Review(ReviewPath& path, const std::string& target, const std::string& body, Endpoint endpoint) {
    head_text_ = Request(target, body.size());
    Refusal refusal;
    EXPECT_TRUE(ParseRequestHead(head_text_, HeadLimits{}, &head_, &refusal)) << refusal.message;
    body_ = body;
    return path.Review(HttpRequest{head_, body_, 0, peer_}, endpoint);
  }

  // An API that cannot be reached, for the reviews that need the head lookup.
  static KubeApiConfig UnreachableApi() {
    KubeApiConfig api;
    api.server = "https://127.0.0.1:1";
    api.timeout = std::chrono::milliseconds(200);
    return api;
  }

  CurrentPolicy policy_{PolicyConfig{}};
  ReviewDecoderPool decoders_;
  Metrics metrics_;
  std::string head_text_, body_;
  RequestHead head_;
  PeerAddresses peer_{"127.0.0.1", "127.0.0.1", 1, 2};
};

TEST_F(ReviewPathTest, AReviewWithoutALookupIsAnsweredAtOnceAndCounted) {
  ReviewPath path(policy_, decoders_, metrics_, nullptr, std::chrono::milliseconds(100));
  const std::string review = ReadFixture("reviews/kuberay-0.4-worker.json");
  Handled h = Review(path, "/mutate", review, Endpoint::kMutate);
  ASSERT_EQ(h.later, nullptr);
  EXPECT_EQ(h.answer.status, 200);
  EXPECT_EQ(h.answer.content_type, "application/json");
  EXPECT_EQ(nlohmann::json::parse(h.answer.body)["response"]["uid"], nlohmann::json::parse(review)["request"]["uid"]);
  EXPECT_NE(metrics_.Render().find("controller_runtime_webhook_requests_total{code=\"200\",webhook=\"/mutate\"} 1"),
            std::string::npos);
}

TEST_F(ReviewPathTest, ABadBodyIs400) {
  ReviewPath path(policy_, decoders_, metrics_, nullptr, std::chrono::milliseconds(100));
  Handled h = Review(path, "/validate", "nope", Endpoint::kValidate);
  ASSERT_EQ(h.later, nullptr);
  EXPECT_EQ(h.answer.status, 400);
  EXPECT_EQ(nlohmann::json::parse(h.answer.body)["kind"], "Status");
}

// A head Pod on /validate needs the lookup: the answer comes from the Deferred,
// here with an API that cannot be reached, which the policy decides on.
TEST_F(ReviewPathTest, AReviewThatNeedsTheLookupIsDeferredAndFinishedByIt) {
  const KubeApiConfig api = UnreachableApi();
  KubeApiClient kube(api);
  ReviewPath path(policy_, decoders_, metrics_, &kube, api.timeout);
  const std::string head = ReadFixture("reviews/head-already-named.json");
  Handled h = Review(path, "/validate?timeout=10s", head, Endpoint::kValidate);
  ASSERT_NE(h.later, nullptr) << "not answered on the event loop";
  EXPECT_TRUE(h.answer.body.empty());
  const HttpAnswer answer = h.later->Run();
  EXPECT_EQ(answer.status, 200);
  const auto j = nlohmann::json::parse(answer.body);
  EXPECT_EQ(j["response"]["uid"], nlohmann::json::parse(head)["request"]["uid"]);
  const std::string rendered = metrics_.Render();
  EXPECT_NE(rendered.find("ray_webhook_head_lookups_total{result=\"error\"} 1"), std::string::npos)
      << "the Deferred looked the heads up";
  EXPECT_NE(rendered.find("webhook=\"/validate\"} 1"), std::string::npos);
}

// /admit does both in one call: a head Pod's lookup is deferred as on
// /validate, and the review is counted under its own path.
TEST_F(ReviewPathTest, AnAdmitReviewOfAHeadIsDeferredAndCountedUnderAdmit) {
  const KubeApiConfig api = UnreachableApi();
  KubeApiClient kube(api);
  ReviewPath path(policy_, decoders_, metrics_, &kube, api.timeout);
  Handled h = Review(path, "/admit?timeout=10s", ReadFixture("reviews/head-already-named.json"), Endpoint::kAdmit);
  ASSERT_NE(h.later, nullptr) << "not answered on the event loop";
  EXPECT_EQ(h.later->Run().status, 200);
  const std::string rendered = metrics_.Render();
  EXPECT_NE(rendered.find("controller_runtime_webhook_requests_total{code=\"200\",webhook=\"/admit\"} 1"),
            std::string::npos)
      << rendered;
  EXPECT_NE(rendered.find("controller_runtime_webhook_latency_seconds_count{webhook=\"/admit\"} 1"), std::string::npos);
}

TEST(HandlerFailed, IsA500StatusForThatRequest) {
  const HttpAnswer a = HandlerFailed("/mutate", "boom");
  EXPECT_EQ(a.status, 500);
  EXPECT_EQ(nlohmann::json::parse(a.body)["reason"], "InternalError");
}

}  // namespace
}  // namespace ray_webhook
