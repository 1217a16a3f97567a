#include "ray_webhook/http/refusal.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ray_webhook {
namespace {

TEST(Refusal, IsAnAnswerWithAKubernetesStatusBody) {
  const HttpAnswer answer = AnswerOf(Refusal{413, "too big"});
  EXPECT_EQ(answer.status, 413);
  EXPECT_EQ(answer.content_type, "application/json");
  const auto j = nlohmann::json::parse(answer.body);
  EXPECT_EQ(j["kind"], "Status");
  EXPECT_EQ(j["code"], 413);
  EXPECT_EQ(j["reason"], "RequestEntityTooLarge");
  EXPECT_EQ(j["message"], "too big");
  EXPECT_EQ(answer.retry_after_seconds, 0);
}

TEST(Refusal, A503AsksToRetryAndA405NamesTheMethods) {
  EXPECT_EQ(AnswerOf(Refusal{503, "busy"}).retry_after_seconds, 1);
  const HttpAnswer wrong_method = AnswerOf(Refusal{405, "no", "POST"});
  EXPECT_EQ(wrong_method.allow, "POST");
  EXPECT_EQ(nlohmann::json::parse(wrong_method.body)["reason"], "MethodNotAllowed");
}

TEST(Refusal, NoStatusIsNoRefusal) {
  EXPECT_FALSE(Refusal());
  EXPECT_TRUE(Refusal(404, "x"));
}

TEST(Refusal, EveryStatusTheServerRefusesWithHasItsReason) {
  EXPECT_EQ(StatusReasonOf(404), "NotFound");
  EXPECT_EQ(StatusReasonOf(411), "LengthRequired");
  EXPECT_EQ(StatusReasonOf(414), "RequestURITooLong");
  EXPECT_EQ(StatusReasonOf(415), "UnsupportedMediaType");
  EXPECT_EQ(StatusReasonOf(417), "ExpectationFailed");
  EXPECT_EQ(StatusReasonOf(431), "RequestHeaderFieldsTooLarge");
  EXPECT_EQ(StatusReasonOf(500), "InternalError");
  EXPECT_EQ(StatusReasonOf(505), "HTTPVersionNotSupported");
  EXPECT_EQ(StatusReasonOf(400), "BadRequest");
}

}  // namespace
}  // namespace ray_webhook
