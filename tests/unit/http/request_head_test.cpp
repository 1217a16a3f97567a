#include "ray_webhook/http/request_head.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

namespace ray_webhook {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(RAY_WEBHOOK_FIXTURES) + "/http-heads/" + name, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Scans and parses one whole head; the refusal's status, or 0.
int StatusOf(const std::string& head, RequestHead* out = nullptr, HeadLimits limits = {}) {
  HeadScanner scanner;
  const HeadScanner::State s = scanner.Scan(head, limits);
  if (s == HeadScanner::State::kRefused) return scanner.refusal().status;
  if (s == HeadScanner::State::kNeedMore) return -1;
  RequestHead parsed;
  Refusal refusal;
  if (!ParseRequestHead(std::string_view(head).substr(0, scanner.head_bytes()), limits, &parsed, &refusal)) {
    return refusal.status;
  }
  if (out) *out = parsed;
  return 0;
}

TEST(HttpRequestHeadTest, KubeApiserversRequestIsFramed) {
  const std::string head = Fixture("kube-apiserver-mutate.http");
  RequestHead h;
  ASSERT_EQ(StatusOf(head, &h), 0);
  EXPECT_EQ(h.method, "POST");
  EXPECT_EQ(h.path, "/mutate");
  EXPECT_EQ(h.target, "/mutate?timeout=5s");
  EXPECT_EQ(h.content_length, 5562u);
  EXPECT_EQ(h.content_type, "application/json");
  EXPECT_FALSE(h.wants_close);
  EXPECT_FALSE(h.expect_continue);
}

TEST(HttpRequestHeadTest, ScanningATrickledHeadLooksAtEachByteOnce) {
  const std::string head = Fixture("kube-apiserver-mutate.http");
  HeadScanner scanner;
  for (std::size_t n = 1; n < head.size(); ++n) {
    ASSERT_EQ(scanner.Scan(std::string_view(head).substr(0, n), {}), HeadScanner::State::kNeedMore) << n;
    EXPECT_EQ(scanner.scanned(), n);
  }
  EXPECT_EQ(scanner.Scan(head, {}), HeadScanner::State::kComplete);
  EXPECT_EQ(scanner.head_bytes(), head.size());
}

TEST(HttpRequestHeadTest, OversizedHeadsAreRefusedBeforeTheyEnd) {
  HeadScanner lines;
  std::string many = "GET / HTTP/1.1\r\n";
  for (int i = 0; i < 101; ++i) many += "X-A: b\r\n";
  EXPECT_EQ(lines.Scan(many, {}), HeadScanner::State::kRefused);
  EXPECT_EQ(lines.refusal().status, 431);

  HeadScanner big;  // a 200 KiB header line with no newline yet
  EXPECT_EQ(big.Scan("GET / HTTP/1.1\r\nX-Big: " + std::string(200 * 1024, 'a'), {}), HeadScanner::State::kRefused);
  EXPECT_EQ(big.refusal().status, 431);

  HeadScanner total;  // short lines past 64 KiB in all
  HeadLimits limits;
  limits.max_header_lines = 100000;
  std::string lots = "GET / HTTP/1.1\r\n";
  while (lots.size() <= 64 * 1024) lots += "X-Filler: " + std::string(100, 'x') + "\r\n";
  EXPECT_EQ(total.Scan(lots, limits), HeadScanner::State::kRefused);
  EXPECT_EQ(total.refusal().status, 431);

  HeadScanner uri;
  EXPECT_EQ(uri.Scan("GET /" + std::string(9000, 'a'), {}), HeadScanner::State::kRefused);
  EXPECT_EQ(uri.refusal().status, 414);
}

TEST(HttpRequestHeadTest, FramingThatCpphttplibWouldReadUnboundedIsRefused) {
  EXPECT_EQ(StatusOf("POST /mutate HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), 411);
  EXPECT_EQ(StatusOf("POST /mutate HTTP/1.1\r\nHost: x\r\n\r\n"), 411);  // read to EOF otherwise
  EXPECT_EQ(StatusOf("POST /mutate HTTP/1.1\r\nContent-Length: 10\r\nContent-Encoding: gzip\r\n\r\n"), 415);
  EXPECT_EQ(StatusOf("POST /mutate HTTP/1.1\r\nContent-Length: 7340033\r\n\r\n"), 413);
  EXPECT_EQ(StatusOf("POST /mutate HTTP/1.1\r\nContent-Length: 7340032\r\n\r\n"), 0);
  EXPECT_EQ(StatusOf("POST /mutate HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("POST /mutate HTTP/1.1\r\nContent-Length: -5\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("POST /mutate HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("POST /mutate HTTP/1.1\r\nContent-Length: 5\r\nExpect: 200-ok\r\n\r\n"), 417);
  EXPECT_EQ(StatusOf("GET / HTTP/1.1\r\nX-A: b\r\n folded\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET / HTTP/2.0\r\n\r\n"), 505);
  EXPECT_EQ(StatusOf("GET http://x/ HTTP/1.1\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("GET /\r\n\r\n"), 400);
  EXPECT_EQ(StatusOf("\r\n"), 400);
}

TEST(HttpRequestHeadTest, ExpectCloseAndTheLengthAreTheEdgesOwn) {
  RequestHead h;
  ASSERT_EQ(StatusOf("POST /validate HTTP/1.1\r\nExpect: 100-Continue\r\nConnection: close\r\n"
                     "Content-Length: 3\r\nRange: bytes=0-1\r\n\r\n",
                     &h),
            0);
  EXPECT_TRUE(h.expect_continue);
  EXPECT_TRUE(h.wants_close);
  EXPECT_EQ(h.content_length, 3u);
  ASSERT_EQ(StatusOf("GET /healthz HTTP/1.0\r\n\r\n", &h), 0);
  EXPECT_TRUE(h.wants_close);
  ASSERT_EQ(StatusOf("GET /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", &h), 0);
  EXPECT_FALSE(h.wants_close);
  const std::string bare_lf = "GET /healthz HTTP/1.1\n\n";  // h's views point into it
  ASSERT_EQ(StatusOf(bare_lf, &h), 0);
  EXPECT_EQ(h.path, "/healthz");
  EXPECT_FALSE(h.wants_close);
}

// A buffer that grows moves: the parsed head's views follow it to the same offsets.
TEST(HttpRequestHeadTest, ViewsFollowTheirBufferWhenItMoves) {
  const std::string first =
      "POST /validate?timeout=5s HTTP/1.1\r\nContent-Type: application/json\r\n"
      "Content-Length: 3\r\n\r\n";
  RequestHead h;
  Refusal refusal;
  ASSERT_TRUE(ParseRequestHead(first, HeadLimits{}, &h, &refusal));
  const HeadPlacement at = PlacementOf(h, first.data());
  const std::string moved = first;  // the same bytes elsewhere
  PlaceAt(&h, at, moved.data());
  EXPECT_EQ(h.method.data(), moved.data());
  EXPECT_EQ(h.path, "/validate");
  EXPECT_EQ(h.path.data(), moved.data() + 5);
  EXPECT_EQ(h.target, "/validate?timeout=5s");
  EXPECT_EQ(h.content_type, "application/json");
  EXPECT_GE(h.content_type.data(), moved.data());
  EXPECT_LT(h.content_type.data(), moved.data() + moved.size());
}

}  // namespace
}  // namespace ray_webhook
