#include "ray_webhook/net/connection_loop.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "ray_webhook/http/http_session.h"
#include "ray_webhook/net/listening_socket.h"

namespace ray_webhook {
namespace {

// The port a listening socket is bound to (for port 0), or 0.
int BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  if (addr.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
  return 0;
}

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// Answers "re:<target>:<body>"; /slow must wait, so it is answered on a
// blocking worker after 300 ms; /refuse takes no body.
class TestHandler final : public HttpHandler {
 public:
  Refusal CheckHead(const RequestHead& head) override {
    if (head.path != "/refuse") return {};
    Record(head.target, "");
    return Refusal{400, "re:" + std::string(head.target) + ":"};
  }
  Handled Handle(const HttpRequest& request) override {
    Handled handled;
    if (request.head.path == "/slow") {
      handled.later = std::make_unique<Slow>(*this, std::string(request.head.target), request.peer.remote_ip);
      return handled;
    }
    handled.answer = Answer(request.head.target, request.body, request.peer.remote_ip);
    return handled;
  }
  bool Stopping() const override { return stopping; }

  std::vector<std::string> Seen() {
    std::lock_guard<std::mutex> lock(mutex);
    return seen;
  }

  std::mutex mutex;
  std::vector<std::string> seen;
  std::vector<std::string> peers;
  std::atomic<bool> stopping{false};
  std::atomic<int> on_worker{0};  // /slow requests a blocking worker has begun to answer

 private:
  class Slow final : public Deferred {
   public:
    Slow(TestHandler& h, std::string target, std::string remote)
        : h_(h), target_(std::move(target)), remote_(std::move(remote)) {}
    HttpAnswer Run() override {
      h_.on_worker.fetch_add(1);
      std::this_thread::sleep_for(300ms);
      return h_.Answer(target_, "", remote_);
    }

   private:
    TestHandler& h_;
    std::string target_, remote_;
  };

  void Record(std::string_view target, std::string_view remote) {
    std::lock_guard<std::mutex> lock(mutex);
    seen.push_back(std::string(target));
    peers.push_back(std::string(remote));
  }
  HttpAnswer Answer(std::string_view target, std::string_view body, std::string_view remote) {
    Record(target, remote);
    HttpAnswer answer;
    answer.content_type = "text/plain";
    answer.body = "re:" + std::string(target) + ":" + std::string(body);
    return answer;
  }
};

// A throw-away self-signed serving pair.
SSL_CTX* ServerContext() {
  EVP_PKEY* key = EVP_EC_gen("P-256");
  X509* cert = X509_new();
  X509_set_version(cert, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert), -60);
  X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
  X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert, X509_get_subject_name(cert));
  X509_set_pubkey(cert, key);
  X509_sign(cert, key, EVP_sha256());
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  SSL_CTX_use_certificate(ctx, cert);
  SSL_CTX_use_PrivateKey(ctx, key);
  SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  X509_free(cert);
  EVP_PKEY_free(key);
  return ctx;
}

// A blocking client with 5 s socket timeouts, so a test that goes wrong fails instead of hanging.
class Client {
 public:
  explicit Client(int port, SSL_CTX* client_ctx = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    timeval tv{5, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(fd_, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    connected_ = ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    if (client_ctx != nullptr) {
      ssl_ = SSL_new(client_ctx);
      SSL_set_fd(ssl_, fd_);
    }
  }
  ~Client() {
    SSL_free(ssl_);
    ::close(fd_);
  }
  bool Handshake() { return connected_ && (ssl_ == nullptr || SSL_connect(ssl_) == 1); }
  bool Send(const std::string& bytes) {
    if (ssl_ == nullptr)
      return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
    return SSL_write(ssl_, bytes.data(), static_cast<int>(bytes.size())) == static_cast<int>(bytes.size());
  }
  bool SendRaw(const std::string& bytes) {
    return ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
  }
  // One answer: head and Content-Length body; empty when the connection ended first.
  std::string Answer() {
    for (;;) {
      const std::size_t end = buffer_.find("\r\n\r\n");
      if (end != std::string::npos) {
        const std::size_t at = buffer_.find("Content-Length: ");
        const std::size_t length = at < end ? std::stoul(buffer_.substr(at + 16)) : 0;
        if (buffer_.size() >= end + 4 + length) {
          std::string answer = buffer_.substr(0, end + 4 + length);
          buffer_.erase(0, end + 4 + length);
          return answer;
        }
      }
      if (!Read()) return "";
    }
  }
  // The server closed: the next read ends the stream.
  bool SeesClose() {
    while (buffer_.empty() && Read()) {
    }
    return buffer_.empty();
  }

 private:
  bool Read() {
    char buf[16384];
    const int n = ssl_ != nullptr ? SSL_read(ssl_, buf, sizeof buf) : static_cast<int>(::recv(fd_, buf, sizeof buf, 0));
    if (n <= 0) return false;
    buffer_.append(buf, static_cast<std::size_t>(n));
    return true;
  }

  int fd_ = -1;
  SSL* ssl_ = nullptr;
  bool connected_ = false;
  std::string buffer_;
};

std::string Get(const std::string& target, const std::string& extra = "") {
  return "GET " + target + " HTTP/1.1\r\nHost: x\r\n" + extra + "\r\n";
}

std::string Post(const std::string& target, const std::string& body, const std::string& extra = "") {
  return "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) + "\r\n" + extra +
         "\r\n" + body;
}

std::string BodyOf(const std::string& answer) { return answer.substr(answer.find("\r\n\r\n") + 4); }

template <typename Predicate>
bool Eventually(Predicate p, std::chrono::milliseconds limit = 5s) {
  const auto until = Clock::now() + limit;
  while (Clock::now() < until) {
    if (p()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return p();
}

class ConnectionLoopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    signal(SIGPIPE, SIG_IGN);
    server_ctx_ = ServerContext();
    client_ctx_ = SSL_CTX_new(TLS_client_method());
  }
  void TearDown() override {
    loop_.reset();
    SSL_CTX_free(server_ctx_);
    SSL_CTX_free(client_ctx_);
  }
  // The loop with HTTP sessions over TestHandler; budget: request bytes held at once.
  void Begin(ConnectionLoop::Options o = {}, bool tls = true, std::size_t budget = 64 * 1024 * 1024) {
    Result<int> listening = OpenListeningSocket("127.0.0.1", 0);
    ASSERT_TRUE(listening.ok()) << listening.error();
    const int fd = *listening;
    port_ = BoundPort(fd);
    loop_ = std::make_unique<ConnectionLoop>(o);
    budget_ = std::make_unique<ByteBudget>(budget);
    HttpSessionOptions session_options;
    session_options.idle_timeout = o.idle_timeout;
    sessions_ = std::make_unique<HttpSessions>(exchange_, *budget_, session_options);
    loop_->AddListener(fd, tls ? server_ctx_ : nullptr, *sessions_);
    const Status started = loop_->Start();
    ASSERT_TRUE(started.ok()) << started.message();
  }
  std::unique_ptr<Client> Connect(bool handshake = true) {
    auto c = std::make_unique<Client>(port_, client_ctx_);
    if (handshake) EXPECT_TRUE(c->Handshake());
    return c;
  }

  SSL_CTX* server_ctx_ = nullptr;
  SSL_CTX* client_ctx_ = nullptr;
  int port_ = 0;
  TestHandler exchange_;
  std::unique_ptr<ByteBudget> budget_;
  std::unique_ptr<HttpSessions> sessions_;
  std::unique_ptr<ConnectionLoop> loop_;  // destroyed first: its threads use the sessions
};

TEST_F(ConnectionLoopTest, AKeepAliveConnectionIsServedRequestAfterRequest) {
  Begin();
  auto c = Connect();
  for (const char* target : {"/one", "/two", "/three"}) {
    ASSERT_TRUE(c->Send(Post(target, "body")));
    EXPECT_EQ(BodyOf(c->Answer()), std::string("re:") + target + ":body");
  }
  EXPECT_EQ(loop_->connections(), 1u);
  EXPECT_EQ(exchange_.peers.back(), "127.0.0.1");
}

// The buffer grows (moves) while the body arrives; the request's head is still read right.
TEST_F(ConnectionLoopTest, ARequestLargerThanTheFirstBufferKeepsItsHead) {
  Begin();
  auto c = Connect();
  const std::string body(40 * 1024, 'b');
  ASSERT_TRUE(c->Send(Post("/large?x=1", body)));
  EXPECT_EQ(BodyOf(c->Answer()), "re:/large?x=1:" + body);
  EXPECT_EQ(exchange_.Seen(), (std::vector<std::string>{"/large?x=1"}));
}

TEST_F(ConnectionLoopTest, PipelinedRequestsAreAnsweredInOrderAndNoBodyIsReadAsARequest) {
  Begin();
  auto c = Connect();
  // The first body looks like a request; it is only a body.
  ASSERT_TRUE(c->Send(Post("/a", Get("/inside")) + Get("/b") + Post("/c", "3")));
  EXPECT_EQ(BodyOf(c->Answer()), "re:/a:" + Get("/inside"));
  EXPECT_EQ(BodyOf(c->Answer()), "re:/b:");
  EXPECT_EQ(BodyOf(c->Answer()), "re:/c:3");
  EXPECT_EQ(exchange_.Seen(), (std::vector<std::string>{"/a", "/b", "/c"}));
}

// One loop, one client with thousands of requests already in its socket: a request of another client
// that arrives meanwhile is taken after a few more of them (kRequestsPerTurn), not after all.
TEST_F(ConnectionLoopTest, APipeliningClientTakesTurnsWithTheOthersOnItsLoop) {
  Begin({}, false);
  Client flood(port_), other(port_);
  ASSERT_TRUE(flood.Handshake() && other.Handshake());
  constexpr long kPipelined = 20000;
  std::string batch;
  for (long i = 0; i < kPipelined; ++i) batch += Get("/flood");
  ASSERT_TRUE(flood.Send(batch));
  ASSERT_TRUE(other.Send(Get("/other")));
  const long taken_before = static_cast<long>(exchange_.Seen().size());
  EXPECT_EQ(BodyOf(other.Answer()), "re:/other:");
  const std::vector<std::string> seen = exchange_.Seen();
  const long other_at = std::find(seen.begin(), seen.end(), "/other") - seen.begin();
  ASSERT_LT(taken_before, kPipelined - 1000) << "the loop had taken nearly all pipelined requests already";
  EXPECT_LT(other_at - taken_before, 100)
      << "the other request waited for " << other_at - taken_before << " pipelined ones after it arrived";
}

TEST_F(ConnectionLoopTest, ARequestThatWaitsIsAnsweredOnAWorkerWithoutHoldingTheLoop) {
  Begin();
  auto slow = Connect();
  auto quick = Connect();
  ASSERT_TRUE(slow->Send(Get("/slow")));
  ASSERT_TRUE(Eventually([&] { return exchange_.on_worker.load() == 1; }));
  const auto start = Clock::now();
  ASSERT_TRUE(quick->Send(Get("/quick")));
  EXPECT_EQ(BodyOf(quick->Answer()), "re:/quick:");
  EXPECT_LT(Clock::now() - start, 200ms) << "the quick request waited for the slow one";
  EXPECT_EQ(BodyOf(slow->Answer()), "re:/slow:");
  // The connection goes on after the worker's answer.
  ASSERT_TRUE(slow->Send(Get("/after")));
  EXPECT_EQ(BodyOf(slow->Answer()), "re:/after:");
}

TEST_F(ConnectionLoopTest, ARefusedRequestIsAnsweredAndItsConnectionClosed) {
  Begin();
  auto chunked = Connect();
  ASSERT_TRUE(
      chunked->Send("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n" + Get("/x")));
  EXPECT_TRUE(chunked->Answer().starts_with("HTTP/1.1 411 "));
  EXPECT_TRUE(chunked->SeesClose());

  auto huge = Connect();
  ASSERT_TRUE(huge->Send("GET / HTTP/1.1\r\nX-Big: " + std::string(70000, 'a')));
  EXPECT_TRUE(huge->Answer().starts_with("HTTP/1.1 431 "));
  EXPECT_TRUE(huge->SeesClose());
  EXPECT_TRUE(exchange_.Seen().empty()) << "nothing reached the handler";
}

TEST_F(ConnectionLoopTest, ContinueIsSentOnlyForARequestWhoseBodyIsWanted) {
  Begin();
  auto wanted = Connect();
  ASSERT_TRUE(wanted->Send("POST /in HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n"));
  EXPECT_EQ(wanted->Answer(), "HTTP/1.1 100 Continue\r\n\r\n");
  ASSERT_TRUE(wanted->Send("data"));
  EXPECT_EQ(BodyOf(wanted->Answer()), "re:/in:data");

  auto refused = Connect();
  ASSERT_TRUE(refused->Send("POST /refuse HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 10\r\n\r\n"));
  const std::string answer = refused->Answer();
  EXPECT_TRUE(answer.find("Connection: close") != std::string::npos) << answer;
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 400 ")) << answer;
  EXPECT_NE(BodyOf(answer).find("\"message\":\"re:/refuse:\""), std::string::npos) << "answered from the head alone";
  // Its body, sent anyway, is read and dropped, never answered.
  refused->Send(Get("/smuggled"));
  EXPECT_TRUE(refused->SeesClose());
  EXPECT_EQ(exchange_.Seen(), (std::vector<std::string>{"/in", "/refuse"}));
}

TEST_F(ConnectionLoopTest, StalledHandshakesAndRequestsCostNoWaitAndAreCutAtTheirDeadline) {
  ConnectionLoop::Options o;
  o.request_timeout = 600ms;
  Begin(o);
  std::vector<std::unique_ptr<Client>> stalled;
  for (int i = 0; i < 100; ++i) {
    stalled.push_back(Connect(false));
    ASSERT_TRUE(stalled.back()->SendRaw(i % 2 ? std::string("\x16\x03\x01\x02", 4) : std::string("GET")));
  }
  for (int i = 0; i < 50; ++i) {
    stalled.push_back(Connect());
    ASSERT_TRUE(stalled.back()->Send("POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\nhalf"));
  }
  const auto start = Clock::now();
  auto fresh = Connect();
  ASSERT_TRUE(fresh->Send(Get("/fresh")));
  EXPECT_EQ(BodyOf(fresh->Answer()), "re:/fresh:");
  EXPECT_LT(Clock::now() - start, 300ms);
  EXPECT_TRUE(Eventually([&] { return loop_->connections_cut() == 150; })) << loop_->connections_cut();
  EXPECT_TRUE(Eventually([&] { return loop_->connections() == 1; }));
}

TEST_F(ConnectionLoopTest, AtTheConnectionLimitANewConnectionClosesTheOldestIdleOne) {
  ConnectionLoop::Options o;
  o.max_connections = 3;
  Begin(o);
  auto oldest = Connect();
  std::this_thread::sleep_for(20ms);
  auto idle = Connect();
  auto busy = Connect();
  ASSERT_TRUE(busy->Send("POST /x HTTP/1.1\r\nContent-Length: 10\r\n\r\nhalf"));
  ASSERT_TRUE(Eventually([&] { return loop_->connections() == 3; }));
  auto fresh = Connect();
  ASSERT_TRUE(fresh->Send(Get("/fresh")));
  EXPECT_EQ(BodyOf(fresh->Answer()), "re:/fresh:");
  EXPECT_TRUE(oldest->SeesClose());
  EXPECT_EQ(loop_->connections_shed(), 1u);
  ASSERT_TRUE(busy->Send("-and-rest"));
  EXPECT_EQ(BodyOf(busy->Answer()), "re:/x:half-and-r");
  // Nothing idle left to close: the next one is refused.
  auto one_more = Connect(false);
  EXPECT_TRUE(Eventually([&] { return loop_->connections_refused() == 1 || loop_->connections_shed() == 2; }));
}

TEST_F(ConnectionLoopTest, ShuttingDownEveryAnswerClosesAndIdleConnectionsCloseWhenNothingIsPending) {
  Begin();
  auto idle = Connect();
  ASSERT_TRUE(idle->Send(Get("/first")));
  EXPECT_EQ(BodyOf(idle->Answer()), "re:/first:");
  auto waiting = Connect();
  ASSERT_TRUE(waiting->Send(Get("/slow")));
  ASSERT_TRUE(Eventually([&] { return exchange_.on_worker.load() == 1; }));
  exchange_.stopping = true;
  loop_->StopAccepting();
  loop_->CloseIdle();
  EXPECT_TRUE(idle->SeesClose()) << "an idle connection that served a request closes";
  const std::string answer = waiting->Answer();
  EXPECT_EQ(BodyOf(answer), "re:/slow:") << "a request that arrived is served";
  EXPECT_NE(answer.find("Connection: close"), std::string::npos);
  EXPECT_TRUE(waiting->SeesClose());
  EXPECT_TRUE(Eventually([&] { return loop_->connections() == 0; }));
  Client late(port_);
  EXPECT_FALSE(late.Handshake()) << "no longer accepting";
}

TEST_F(ConnectionLoopTest, RequestBytesBeyondTheSharedBudgetAreRefused) {
  Begin({}, true, 200 * 1024);
  auto big = Connect();
  ASSERT_TRUE(big->Send(Post("/big", std::string(300 * 1024, 'x'))));
  EXPECT_TRUE(big->Answer().starts_with("HTTP/1.1 503 "));
  auto small = Connect();
  ASSERT_TRUE(small->Send(Post("/small", "ok")));
  EXPECT_EQ(BodyOf(small->Answer()), "re:/small:ok") << "the budget is given back";
}

TEST_F(ConnectionLoopTest, APlainListenerServesHttp) {
  Begin({}, false);
  Client c(port_);
  ASSERT_TRUE(c.Handshake());
  ASSERT_TRUE(c.Send(Get("/healthz")));
  EXPECT_EQ(BodyOf(c.Answer()), "re:/healthz:");
}

TEST_F(ConnectionLoopTest, AQuickClientIsCaughtByBusyPolling) {
  ConnectionLoop::Options o;
  o.busy_poll = 1ms;
  Begin(o);
  auto c = Connect();
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(c->Send(Get("/q")));
    ASSERT_FALSE(c->Answer().empty());
  }
  EXPECT_GT(loop_->busy_polls(), 0u);
}

}  // namespace
}  // namespace ray_webhook
