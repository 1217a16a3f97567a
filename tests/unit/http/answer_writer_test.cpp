#include "ray_webhook/http/answer_writer.h"

#include <gtest/gtest.h>

#include <string>

namespace ray_webhook {
namespace {

TEST(AnswerWriter, AKeptAliveAnswerSaysForHowLongAndHowMany) {
  HttpAnswer answer;
  answer.body = "{}";
  AnswerFraming framing;
  framing.keep_alive_seconds = 7;
  std::string out;
  WriteAnswer(answer, framing, &out);
  EXPECT_EQ(out,
            "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: application/json\r\n"
            "Keep-Alive: timeout=7, max=100000\r\n\r\n{}");
}

TEST(AnswerWriter, AClosingAnswerSaysSoAndNoKeepAlive) {
  HttpAnswer answer;
  answer.status = 400;
  answer.body = "x";
  answer.content_type = "text/plain";
  AnswerFraming framing;
  framing.close = true;
  std::string out;
  WriteAnswer(answer, framing, &out);
  EXPECT_EQ(out,
            "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 1\r\nContent-Type: text/plain\r\n\r\nx");
}

// The headers in cpp-httplib's case-insensitive order: Allow, Connection, Content-*, Keep-Alive, Retry-After.
TEST(AnswerWriter, HeadersComeInSortedOrder) {
  HttpAnswer answer;
  answer.status = 503;
  answer.body = "b";
  answer.allow = "GET, HEAD";
  answer.retry_after_seconds = 1;
  std::string out;
  WriteAnswer(answer, AnswerFraming{}, &out);
  const auto at = [&](const char* h) { return out.find(h); };
  EXPECT_TRUE(out.starts_with("HTTP/1.1 503 Service Unavailable\r\n")) << out;
  EXPECT_LT(at("Allow: GET, HEAD\r\n"), at("Content-Length: 1\r\n"));
  EXPECT_LT(at("Content-Length: 1\r\n"), at("Content-Type: application/json\r\n"));
  EXPECT_LT(at("Content-Type: application/json\r\n"), at("Keep-Alive: "));
  EXPECT_LT(at("Keep-Alive: "), at("Retry-After: 1\r\n"));
  EXPECT_NE(at("Retry-After: 1\r\n"), std::string::npos);
}

TEST(AnswerWriter, HeadGetsTheHeadersOfTheBodyButNotTheBody) {
  HttpAnswer answer;
  answer.body = "ok\n";
  answer.content_type = "text/plain";
  AnswerFraming framing;
  framing.head_only = true;
  std::string out;
  WriteAnswer(answer, framing, &out);
  EXPECT_NE(out.find("Content-Length: 3\r\n"), std::string::npos);
  EXPECT_TRUE(out.ends_with("\r\n\r\n")) << out;
}

TEST(AnswerWriter, AnEmptyBodyHasALengthAndNoType) {
  HttpAnswer answer;
  std::string out;
  WriteAnswer(answer, AnswerFraming{}, &out);
  EXPECT_NE(out.find("Content-Length: 0\r\n"), std::string::npos);
  EXPECT_EQ(out.find("Content-Type"), std::string::npos);
}

TEST(AnswerWriter, AppendsAfterWhatIsAlreadyWritten) {
  std::string out = "earlier";
  WriteContinue(&out);
  EXPECT_EQ(out, "earlierHTTP/1.1 100 Continue\r\n\r\n");
}

}  // namespace
}  // namespace ray_webhook
