#include "ray_webhook/tls_connection.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "tls_pair.h"

namespace ray_webhook {
namespace {

using namespace std::chrono_literals;
using testing::TlsPair;

// Reads one "request" (a line ending in '\n') and answers "re:" + the line.
// A line "close\n" asks to close the connection.
class EchoExchange final : public TlsExchange {
 public:
  explicit EchoExchange(TlsPair* pair = nullptr) : pair_(pair) {}

  bool Exchange(TlsStream& stream, bool last, bool& closed) override {
    std::string line;
    char c = 0;
    ssize_t n;
    while ((n = stream.read(&c, 1)) == 1) {
      line += c;
      if (c == '\n') break;
    }
    if (n != 1) return false;
    lines.push_back(line);
    lasts.push_back(last);
    closed = line == "close\n";
    const std::string answer = "re:" + line;
    return stream.write(answer.data(), answer.size()) == static_cast<ssize_t>(answer.size());
  }
  void Answered(const SSL*) override {
    ++answered;
    // The answer has reached the client's socket by the time this runs.
    if (pair_ != nullptr) answer_waiting_when_answered.push_back(pair_->ClientHasBytesWaiting());
  }
  bool Stopping() const override { return stopping; }

  std::vector<std::string> lines;
  std::vector<bool> lasts;
  std::vector<bool> answer_waiting_when_answered;
  std::atomic<int> answered{0};
  std::atomic<bool> stopping{false};

 private:
  TlsPair* pair_;
};

TlsConnectionLimits Limits(std::size_t max_requests, std::chrono::milliseconds keep_alive) {
  TlsConnectionLimits l;
  l.max_requests = max_requests;
  l.keep_alive = keep_alive;
  l.read_timeout_sec = l.write_timeout_sec = 5;
  return l;
}

// The client sees the connection end: its next read returns nothing.
bool ClientSeesClose(TlsPair& pair) {
  char c;
  return SSL_read(pair.client(), &c, 1) <= 0;
}

class TlsConnectionTest : public ::testing::Test {
 protected:
  std::future<bool> Serve(TlsConnectionLimits limits, TlsExchange& exchange, bool handshake = true) {
    const int sock = pair_.Connect(handshake);
    pair_.GiveAwayServerSocket();
    return std::async(std::launch::async,
                      [this, sock, limits, &exchange] { return ServeTlsConnection(pair_.server_ctx(), sock, limits, exchange); });
  }
  TlsPair pair_;
};

TEST_F(TlsConnectionTest, ServesRequestsInOrderAndTellsTheLastOneUpToTheLimit) {
  EchoExchange exchange;
  auto served = Serve(Limits(3, 5s), exchange);
  for (const std::string line : {"one\n", "two\n", "three\n"}) {
    pair_.ClientSend(line);
    EXPECT_EQ(pair_.ClientReceive(3 + line.size()), "re:" + line);
  }
  ASSERT_EQ(served.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(served.get());
  EXPECT_EQ(exchange.lines, (std::vector<std::string>{"one\n", "two\n", "three\n"}));
  EXPECT_EQ(exchange.lasts, (std::vector<bool>{false, false, true}));
  // Ended cleanly: close_notify, then the socket closed.
  char c;
  EXPECT_EQ(SSL_read(pair_.client(), &c, 1), 0);
  EXPECT_EQ(SSL_get_error(pair_.client(), 0), SSL_ERROR_ZERO_RETURN);
}

TEST_F(TlsConnectionTest, AnAnswerHasLeftBeforeAnsweredRuns) {
  // ConnectionTracker marks the connection idle in Answered; a graceful
  // shutdown may then cut it, so nothing of the answer may still be held.
  EchoExchange exchange(&pair_);
  auto served = Serve(Limits(2, 5s), exchange);
  // The client reads each answer only after Answered has looked at its socket.
  const auto await_answered = [&](int n) {
    for (int i = 0; i < 500 && exchange.answered < n; ++i) std::this_thread::sleep_for(10ms);
  };
  pair_.ClientSend("a\n");
  await_answered(1);
  EXPECT_EQ(pair_.ClientReceive(5), "re:a\n");
  pair_.ClientSend("b\n");
  await_answered(2);
  EXPECT_EQ(pair_.ClientReceive(5), "re:b\n");
  ASSERT_EQ(served.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(exchange.answered, 2);
  EXPECT_EQ(exchange.answer_waiting_when_answered, (std::vector<bool>{true, true}));
}

TEST_F(TlsConnectionTest, PipelinedRequestsAreServedFromWhatWasAlreadyRead) {
  // Both requests arrive in one record: the second is already buffered, and
  // the socket has nothing more to poll for.
  EchoExchange exchange;
  auto served = Serve(Limits(100, 300ms), exchange);
  pair_.ClientSend("first\nclose\n");
  EXPECT_EQ(pair_.ClientReceive(9 + 9), "re:first\nre:close\n");
  ASSERT_EQ(served.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(served.get());
  EXPECT_EQ(exchange.lines, (std::vector<std::string>{"first\n", "close\n"}));
}

TEST_F(TlsConnectionTest, AnIdleConnectionIsClosedAfterTheKeepAliveTimeout) {
  EchoExchange exchange;
  auto served = Serve(Limits(100, 300ms), exchange);
  pair_.ClientSend("one\n");
  EXPECT_EQ(pair_.ClientReceive(7), "re:one\n");
  ASSERT_EQ(served.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(exchange.lines.size(), 1u);
  EXPECT_TRUE(ClientSeesClose(pair_));
}

TEST_F(TlsConnectionTest, AStoppingServerClosesAWaitingConnection) {
  EchoExchange exchange;
  auto served = Serve(Limits(100, 60s), exchange);
  pair_.ClientSend("one\n");
  EXPECT_EQ(pair_.ClientReceive(7), "re:one\n");
  exchange.stopping = true;
  // Far sooner than the 60 s keep-alive: within a slice of the wait.
  ASSERT_EQ(served.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(exchange.lines.size(), 1u);
  EXPECT_TRUE(ClientSeesClose(pair_));
}

TEST_F(TlsConnectionTest, APeerThatClosesEndsTheConnection) {
  EchoExchange exchange;
  auto served = Serve(Limits(100, 60s), exchange);
  pair_.ClientSend("one\n");
  EXPECT_EQ(pair_.ClientReceive(7), "re:one\n");
  SSL_shutdown(pair_.client());
  ::shutdown(pair_.client_fd(), SHUT_WR);
  ASSERT_EQ(served.wait_for(5s), std::future_status::ready);
  EXPECT_FALSE(served.get());
  EXPECT_EQ(exchange.lines.size(), 1u);
}

TEST_F(TlsConnectionTest, AFailedHandshakeClosesTheSocketWithoutAnExchange) {
  EchoExchange exchange;
  auto served = Serve(Limits(100, 60s), exchange, /*handshake=*/false);
  const std::string not_tls = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(pair_.client_fd(), not_tls.data(), not_tls.size(), 0), static_cast<ssize_t>(not_tls.size()));
  ASSERT_EQ(served.wait_for(5s), std::future_status::ready);
  EXPECT_FALSE(served.get());
  EXPECT_TRUE(exchange.lines.empty());
  EXPECT_EQ(exchange.answered, 0);
  // The server closed its socket: the client reads what alert there was, then the end.
  char buf[256];
  ssize_t n;
  while ((n = ::recv(pair_.client_fd(), buf, sizeof(buf), 0)) > 0) {
  }
  EXPECT_EQ(n, 0);
}

}  // namespace
}  // namespace ray_webhook
