#include "ray_webhook/http/http_session.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace ray_webhook {
namespace {

// Runs blocking work when the test says so, on the test's thread.
class FakeHost final : public SessionHost {
 public:
  void RunBlocking(std::function<void()> work) override { queued.push_back(std::move(work)); }
  bool Stopping() const override { return stopping; }
  std::vector<std::function<void()>> queued;
  bool stopping = false;
};

// Answers "<method> <target> <body>"; /wait has a Deferred part; /no takes no body.
class EchoHandler final : public HttpHandler {
 public:
  Refusal CheckHead(const RequestHead& head) override {
    return head.path == "/no" ? Refusal(415, "no body here") : Refusal();
  }
  Handled Handle(const HttpRequest& request) override {
    ++handled;
    Handled h;
    const std::string text =
        std::string(request.head.method) + " " + std::string(request.head.target) + " " + std::string(request.body);
    if (request.head.path == "/wait") {
      h.later = std::make_unique<Later>(text);
    } else {
      h.answer.content_type = "text/plain";
      h.answer.body = text;
    }
    return h;
  }
  bool Stopping() const override { return stopping; }
  int handled = 0;
  bool stopping = false;

 private:
  struct Later final : Deferred {
    explicit Later(std::string t) : text(std::move(t)) {}
    HttpAnswer Run() override {
      HttpAnswer a;
      a.content_type = "text/plain";
      a.body = "later " + text;
      return a;
    }
    std::string text;
  };
};

class HttpSessionTest : public ::testing::Test {
 protected:
  void Open(std::size_t budget = 1 << 20, std::size_t max_requests = 100000) {
    budget_ = std::make_unique<ByteBudget>(budget);
    HttpSessionOptions o;
    o.max_requests = max_requests;
    o.idle_timeout = std::chrono::seconds(9);
    sessions_ = std::make_unique<HttpSessions>(handler_, *budget_, o);
    session_ = sessions_->Open(host_, peer_);
  }
  // Feeds bytes as reads would, as far as the session takes them.
  void Feed(std::string_view bytes) {
    while (!bytes.empty()) {
      const std::span<char> room = session_->ReadRoom();
      ASSERT_FALSE(room.empty());
      const std::size_t n = std::min(room.size(), bytes.size());
      std::memcpy(room.data(), bytes.data(), n);
      session_->Received(n);
      bytes.remove_prefix(n);
    }
  }
  std::string TakeOutput() {
    std::string out = session_->output();
    session_->output().clear();
    return out;
  }

  FakeHost host_;
  EchoHandler handler_;
  PeerAddresses peer_;
  std::unique_ptr<ByteBudget> budget_;
  std::unique_ptr<HttpSessions> sessions_;
  std::unique_ptr<Session> session_;
};

TEST_F(HttpSessionTest, ARequestIsAnsweredOnceWholeAndKeepsTheConnection) {
  Open();
  Feed("POST /a HTTP/1.1\r\nContent-Length: 4\r\n\r\nab");
  EXPECT_EQ(session_->Advance(), Session::Next::kRead);
  EXPECT_TRUE(session_->InRequest());
  Feed("cd");
  EXPECT_EQ(session_->Advance(), Session::Next::kWriteAnswer);
  const std::string out = TakeOutput();
  EXPECT_TRUE(out.starts_with("HTTP/1.1 200 OK\r\n")) << out;
  EXPECT_NE(out.find("Keep-Alive: timeout=9, max=100000\r\n"), std::string::npos) << out;
  EXPECT_TRUE(out.ends_with("POST /a abcd"));
  EXPECT_FALSE(session_->InRequest());
  EXPECT_FALSE(session_->HasInput());
  EXPECT_TRUE(session_->Used());
}

TEST_F(HttpSessionTest, PipelinedRequestsAreFramedOneAfterAnother) {
  Open();
  Feed("GET /one HTTP/1.1\r\n\r\nGET /two HTTP/1.1\r\n\r\n");
  EXPECT_EQ(session_->Advance(), Session::Next::kWriteAnswer);
  EXPECT_TRUE(TakeOutput().ends_with("GET /one "));
  EXPECT_TRUE(session_->HasInput());
  EXPECT_EQ(session_->Advance(), Session::Next::kWriteAnswer);
  EXPECT_TRUE(TakeOutput().ends_with("GET /two "));
  EXPECT_EQ(session_->Advance(), Session::Next::kRead);
}

TEST_F(HttpSessionTest, ARequestThatAsksToCloseIsAnsweredWithCloseAndIsTheLast) {
  Open();
  Feed("GET /x HTTP/1.1\r\nConnection: close\r\n\r\n");
  EXPECT_EQ(session_->Advance(), Session::Next::kClose);
  const std::string out = TakeOutput();
  EXPECT_NE(out.find("Connection: close\r\n"), std::string::npos);
  EXPECT_EQ(out.find("Keep-Alive"), std::string::npos);
}

TEST_F(HttpSessionTest, TheLastRequestAllowedOnAConnectionCloses) {
  Open(1 << 20, 2);
  Feed("GET /1 HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n");
  EXPECT_EQ(session_->Advance(), Session::Next::kWriteAnswer);
  TakeOutput();
  EXPECT_EQ(session_->Advance(), Session::Next::kClose);
}

TEST_F(HttpSessionTest, AMalformedHeadIsRefusedAndCloses) {
  Open();
  Feed("POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n");
  EXPECT_EQ(session_->Advance(), Session::Next::kClose);
  const std::string out = TakeOutput();
  EXPECT_TRUE(out.starts_with("HTTP/1.1 411 Length Required\r\n")) << out;
  EXPECT_NE(out.find("\"reason\":\"LengthRequired\""), std::string::npos) << out;
  EXPECT_EQ(handler_.handled, 0);
  EXPECT_FALSE(session_->HasInput()) << "what was received is dropped";
}

TEST_F(HttpSessionTest, ABodyTheHandlerRefusesIsNeverWaitedFor) {
  Open();
  Feed("POST /no HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 100\r\n\r\n");
  EXPECT_EQ(session_->Advance(), Session::Next::kClose);
  EXPECT_TRUE(TakeOutput().starts_with("HTTP/1.1 415 ")) << "no 100 Continue first";
  EXPECT_EQ(handler_.handled, 0);
}

TEST_F(HttpSessionTest, ContinueIsInterimAndTheRequestGoesOn) {
  Open();
  Feed("POST /a HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n");
  EXPECT_EQ(session_->Advance(), Session::Next::kWriteInterim);
  EXPECT_EQ(TakeOutput(), "HTTP/1.1 100 Continue\r\n\r\n");
  EXPECT_EQ(session_->Advance(), Session::Next::kRead) << "Continue is sent once";
  Feed("ok");
  EXPECT_EQ(session_->Advance(), Session::Next::kWriteAnswer);
}

TEST_F(HttpSessionTest, DeferredWorkIsAnsweredOnResume) {
  Open();
  Feed("GET /wait HTTP/1.1\r\n\r\n");
  EXPECT_EQ(session_->Advance(), Session::Next::kWait);
  ASSERT_EQ(host_.queued.size(), 1u);
  EXPECT_TRUE(session_->output().empty());
  host_.queued[0]();
  EXPECT_EQ(session_->Resume(), Session::Next::kWriteAnswer);
  const std::string out = TakeOutput();
  EXPECT_TRUE(out.ends_with("later GET /wait ")) << out;
  EXPECT_NE(out.find("Keep-Alive"), std::string::npos);
}

// A shutdown that begins while the work runs: its answer says Connection: close as it is written.
TEST_F(HttpSessionTest, AShutdownDuringDeferredWorkClosesItsAnswer) {
  Open();
  Feed("GET /wait HTTP/1.1\r\n\r\n");
  ASSERT_EQ(session_->Advance(), Session::Next::kWait);
  handler_.stopping = true;
  host_.queued[0]();
  EXPECT_EQ(session_->Resume(), Session::Next::kClose);
  const std::string out = TakeOutput();
  EXPECT_NE(out.find("Connection: close\r\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("Keep-Alive"), std::string::npos) << out;
}

TEST_F(HttpSessionTest, TheLoopStoppingClosesAnswersToo) {
  Open();
  host_.stopping = true;
  Feed("GET /x HTTP/1.1\r\n\r\n");
  EXPECT_EQ(session_->Advance(), Session::Next::kClose);
}

TEST_F(HttpSessionTest, HeadGetsNoBody) {
  Open();
  Feed("HEAD /h HTTP/1.1\r\n\r\n");
  EXPECT_EQ(session_->Advance(), Session::Next::kWriteAnswer);
  const std::string out = TakeOutput();
  EXPECT_TRUE(out.ends_with("\r\n\r\n")) << out;
  EXPECT_NE(out.find("Content-Length: 8\r\n"), std::string::npos) << out;
}

TEST_F(HttpSessionTest, BufferBytesComeFromTheSharedBudgetAndGoBack) {
  Open(8 * 1024);
  EXPECT_FALSE(session_->ReadRoom().empty());
  EXPECT_EQ(budget_->used.load(), 8u * 1024);
  auto other = sessions_->Open(host_, peer_);
  EXPECT_TRUE(other->ReadRoom().empty()) << "the budget is spent";
  EXPECT_EQ(other->OutOfRoom(), Session::Next::kClose);
  EXPECT_TRUE(other->output().starts_with("HTTP/1.1 503 ")) << other->output();
  EXPECT_NE(other->output().find("Retry-After: 1\r\n"), std::string::npos);
  session_.reset();
  EXPECT_EQ(budget_->used.load(), 0u) << "a closed session gives its buffer back";
}

}  // namespace
}  // namespace ray_webhook
