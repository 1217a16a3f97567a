#include "ray_webhook/connection_loop.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <set>
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
  bool Exchange(TlsStream& stream, bool last, bool& closed) override {
    std::string line;
    char c = 0;
    ssize_t n;
    while ((n = stream.read(&c, 1)) == 1) {
      if (line.empty()) ++started;
      line += c;
      if (c == '\n') break;
    }
    if (n != 1) return false;
    {
      std::lock_guard<std::mutex> lock(mutex);
      lines.push_back(line);
      lasts.push_back(last);
      threads.insert(std::this_thread::get_id());
    }
    closed = line == "close\n";
    if (line == "nap\n") std::this_thread::sleep_for(100ms);
    if (line == "stop\n") stopping = true;
    const std::string answer = "re:" + line;
    const bool written = stream.write(answer.data(), answer.size()) == static_cast<ssize_t>(answer.size());
    ++answered;
    return written;
  }
  bool Stopping() const override { return stopping; }

  std::vector<std::string> Lines() {
    std::lock_guard<std::mutex> lock(mutex);
    return lines;
  }

  std::mutex mutex;
  std::vector<std::string> lines;
  std::vector<bool> lasts;
  std::set<std::thread::id> threads;  // that served a request
  std::atomic<int> started{0};  // requests whose first byte was read
  std::atomic<int> answered{0};  // answers written
  std::atomic<bool> stopping{false};
};

ConnectionLoop::Options Options(std::size_t max_requests, std::size_t min_workers = 1, std::size_t max_workers = 4) {
  ConnectionLoop::Options o;
  o.min_workers = min_workers;
  o.max_workers = max_workers;
  o.max_requests = max_requests;
  return o;
}

template <typename Predicate>
bool Eventually(Predicate p) {
  for (int i = 0; i < 500; ++i) {
    if (p()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return p();
}

// The client sees the connection end: its next read returns nothing.
bool ClientSeesClose(TlsPair& pair) {
  char c;
  return SSL_read(pair.client(), &c, 1) <= 0;
}

class ConnectionLoopTest : public ::testing::Test {
 protected:
  void Begin(ConnectionLoop::Options options) {
    loop_ = std::make_unique<ConnectionLoop>(options, exchange_);
    std::string error;
    ASSERT_TRUE(loop_->Start(&error)) << error;
  }
  // workers workers, one of them active, and the others waiting as spares
  // (until then, one that starts while the active one is busy would be the
  // one waiting in the set).
  void BeginWithOneActiveWorker(std::size_t workers, std::chrono::milliseconds stall) {
    ConnectionLoop::Options o = Options(100, workers, 8);
    o.active_workers = 1;
    o.stall = stall;
    Begin(o);
    ASSERT_TRUE(Eventually([&] { return loop_->spares() == workers - 1; }));
  }
  // Connects a client of pair and hands the server's side to the loop.
  void Connect(TlsPair& pair) {
    const int sock = pair.Connect();
    pair.GiveAwayServerSocket();
    loop_->Serve(pair.server_ctx(), sock);
    ASSERT_TRUE(pair.ClientReady());
  }
  // Sends each line on pair, after pause, and checks its answer.
  void EchoEach(TlsPair& pair, const std::vector<std::string>& lines, std::chrono::milliseconds pause = 0ms) {
    for (const std::string& line : lines) {
      std::this_thread::sleep_for(pause);
      pair.ClientSend(line);
      EXPECT_EQ(pair.ClientReceive(3 + line.size()), "re:" + line);
    }
  }
  void TearDown() override {
    if (loop_) loop_->Stop();
  }

  TlsPair pair_;
  EchoExchange exchange_;
  std::unique_ptr<ConnectionLoop> loop_;
};

TEST_F(ConnectionLoopTest, ServesRequestsInOrderAndTellsTheLastOneUpToTheLimit) {
  Begin(Options(3));
  Connect(pair_);
  EXPECT_EQ(loop_->connections(), 1u);
  EchoEach(pair_, {"one\n", "two\n", "three\n"});
  // Ended cleanly: close_notify, then the socket closed.
  char c;
  EXPECT_EQ(SSL_read(pair_.client(), &c, 1), 0);
  EXPECT_EQ(SSL_get_error(pair_.client(), 0), SSL_ERROR_ZERO_RETURN);
  EXPECT_TRUE(Eventually([&] { return loop_->connections() == 0; }));
  EXPECT_EQ(exchange_.Lines(), (std::vector<std::string>{"one\n", "two\n", "three\n"}));
  EXPECT_EQ(exchange_.lasts, (std::vector<bool>{false, false, true}));
}

TEST_F(ConnectionLoopTest, PipelinedRequestsAreServedFromWhatWasAlreadyRead) {
  // Both requests arrive in one record: after the first, the second is
  // already read, and the socket will not become readable for it again.
  Begin(Options(100));
  Connect(pair_);
  pair_.ClientSend("first\nsecond\n");
  EXPECT_EQ(pair_.ClientReceive(9 + 10), "re:first\nre:second\n");
  EXPECT_EQ(exchange_.Lines(), (std::vector<std::string>{"first\n", "second\n"}));
}

TEST_F(ConnectionLoopTest, CloseIdleClosesOnlyConnectionsThatWaitedLongEnough) {
  Begin(Options(100));
  Connect(pair_);
  pair_.ClientSend("one\n");
  EXPECT_EQ(pair_.ClientReceive(7), "re:one\n");
  EXPECT_EQ(loop_->CloseIdle(1h), 0u);
  // Once it has waited 20 ms (its worker puts it back just after the answer).
  EXPECT_TRUE(Eventually([&] { return loop_->CloseIdle(20ms) == 1; }));
  EXPECT_TRUE(ClientSeesClose(pair_));
  EXPECT_TRUE(Eventually([&] { return loop_->connections() == 0; }));
}

TEST_F(ConnectionLoopTest, AStoppingServerClosesTheConnectionAfterTheAnswer) {
  Begin(Options(100));
  Connect(pair_);
  // The server starts stopping while it serves this request ("stop\n").
  pair_.ClientSend("stop\n");
  EXPECT_EQ(pair_.ClientReceive(8), "re:stop\n");
  EXPECT_TRUE(ClientSeesClose(pair_));
  EXPECT_TRUE(Eventually([&] { return loop_->connections() == 0; }));
}

TEST_F(ConnectionLoopTest, StopClosesWaitingConnectionsLetsARequestFinishAndJoinsTheWorkers) {
  TlsPair busy;
  Begin(Options(100, 1, 4));
  Connect(pair_);
  Connect(busy);
  pair_.ClientSend("one\n");
  EXPECT_EQ(pair_.ClientReceive(7), "re:one\n");
  busy.ClientSend("half");
  ASSERT_TRUE(Eventually([&] { return exchange_.started == 2; })) << "a worker waits for the rest of it";
  auto stopped = std::async(std::launch::async, [&] { loop_->Stop(); });
  EXPECT_TRUE(ClientSeesClose(pair_)) << "the waiting connection is closed";
  EXPECT_EQ(stopped.wait_for(200ms), std::future_status::timeout) << "the request in progress is waited for";
  busy.ClientSend(" done\n");
  EXPECT_EQ(busy.ClientReceive(13), "re:half done\n");
  EXPECT_TRUE(ClientSeesClose(busy));
  ASSERT_EQ(stopped.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(loop_->connections(), 0u);
  EXPECT_EQ(loop_->workers(), 0u);
}

TEST_F(ConnectionLoopTest, AWorkerHeldByASlowRequestDoesNotHoldTheOthers) {
  TlsPair slow;
  Begin(Options(100, 1, 4));
  Connect(slow);
  Connect(pair_);
  slow.ClientSend("sl");
  ASSERT_TRUE(Eventually([&] { return exchange_.started == 1; })) << "its worker waits for the end of the line";
  pair_.ClientSend("quick\n");
  EXPECT_EQ(pair_.ClientReceive(9), "re:quick\n");
  slow.ClientSend("ow\n");
  EXPECT_EQ(slow.ClientReceive(8), "re:slow\n");
}

TEST_F(ConnectionLoopTest, AHandshakeThatStallsDoesNotHoldTheOthers) {
  TlsPair stalled;
  Begin(Options(100, 1, 4));
  Connect(pair_);
  const int sock = stalled.Connect(/*handshake=*/false);
  stalled.GiveAwayServerSocket();
  loop_->Serve(stalled.server_ctx(), sock);
  // The first byte of a TLS record: a worker starts the handshake and waits for the rest.
  ASSERT_EQ(::send(stalled.client_fd(), "\x16", 1, 0), 1);
  std::this_thread::sleep_for(50ms);
  pair_.ClientSend("hello\n");
  EXPECT_EQ(pair_.ClientReceive(9), "re:hello\n");
  EXPECT_GE(loop_->workers(), 2u);
}

TEST_F(ConnectionLoopTest, ASpareTakesOverFromAWorkerHeldByASlowRequest) {
  TlsPair slow;
  ConnectionLoop::Options o = Options(100, 3, 8);
  o.active_workers = 1;
  Begin(o);
  Connect(slow);
  Connect(pair_);
  slow.ClientSend("sl");
  ASSERT_TRUE(Eventually([&] { return exchange_.started == 1; }));
  pair_.ClientSend("quick\n");
  EXPECT_EQ(pair_.ClientReceive(9), "re:quick\n");
  EXPECT_EQ(loop_->workers(), 3u) << "a spare was called; none had to start";
  slow.ClientSend("ow\n");
  EXPECT_EQ(slow.ClientReceive(8), "re:slow\n");
}

TEST_F(ConnectionLoopTest, ARequestArrivingWhileTheActiveWorkerIsBusyWaitsForIt) {
  // Spares stay asleep unless the active worker stalls: one warm thread
  // takes request after request instead of a second thread taking turns.
  TlsPair other;
  BeginWithOneActiveWorker(4, std::chrono::milliseconds(2000));
  Connect(pair_);
  Connect(other);
  pair_.ClientSend("nap\n");  // answered after 100 ms
  ASSERT_TRUE(Eventually([&] { return exchange_.started == 1; }));
  other.ClientSend("hi\n");
  EXPECT_EQ(pair_.ClientReceive(7), "re:nap\n");
  EXPECT_EQ(other.ClientReceive(6), "re:hi\n");
  std::lock_guard<std::mutex> lock(exchange_.mutex);
  EXPECT_EQ(exchange_.threads.size(), 1u);
}

TEST_F(ConnectionLoopTest, AnIdleSupervisorSleepsAndWakesWhenARequestIsTaken) {
  // An idle server does not wake every stall; the first request taken wakes
  // the supervisor, which then still calls a spare when that request stalls.
  TlsPair other;
  BeginWithOneActiveWorker(2, std::chrono::milliseconds(1));
  const std::size_t before = loop_->supervisor_wakeups();
  std::this_thread::sleep_for(200ms);
  EXPECT_LE(loop_->supervisor_wakeups() - before, 3u) << "a 1 ms stall would wake it about 200 times";
  Connect(pair_);
  Connect(other);
  std::this_thread::sleep_for(50ms);  // asleep again: the handshakes were taken, then nothing
  pair_.ClientSend("nap\n");          // holds the active worker for 100 ms
  ASSERT_TRUE(Eventually([&] { return exchange_.started == 1; }));
  other.ClientSend("hi\n");
  EXPECT_EQ(other.ClientReceive(6), "re:hi\n");
  EXPECT_EQ(exchange_.answered, 1) << "a spare answered while the nap went on";
  EXPECT_EQ(pair_.ClientReceive(7), "re:nap\n");
}

TEST_F(ConnectionLoopTest, ARequestThatComesWithinTheBusyPollIsTakenWithoutSleeping) {
  ConnectionLoop::Options o = Options(100);
  o.busy_poll = std::chrono::milliseconds(500);  // long, so a loaded test machine still sees it
  Begin(o);
  Connect(pair_);
  EchoEach(pair_, {"one\n", "two\n", "three\n", "four\n", "five\n"}, 5ms);  // the worker is waiting by then
  // Each request came 5 ms after the worker began to wait, within 500 ms of
  // the one before, so the worker polled and took it while polling (the
  // first, after the handshake, may find the worker asleep).
  EXPECT_GE(loop_->busy_poll_catches(), 4u);
}

TEST_F(ConnectionLoopTest, AfterAWaitLongerThanTheBusyPollTheNextWaitSleepsAtOnce) {
  ConnectionLoop::Options o = Options(100);
  o.busy_poll = std::chrono::milliseconds(30);
  Begin(o);
  Connect(pair_);
  pair_.ClientSend("one\n");
  EXPECT_EQ(pair_.ClientReceive(7), "re:one\n");
  std::this_thread::sleep_for(150ms);  // a poll, if any, ran out: this wait is long
  const std::size_t polls = loop_->busy_polls();
  pair_.ClientSend("two\n");
  EXPECT_EQ(pair_.ClientReceive(7), "re:two\n");
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(loop_->busy_polls(), polls) << "the wait for two was long: no poll before the next";
  // three comes after another long wait; four right after three's answer,
  // and that short wait makes the worker poll after four's answer.
  pair_.ClientSend("three\n");
  EXPECT_EQ(pair_.ClientReceive(9), "re:three\n");
  pair_.ClientSend("four\n");
  EXPECT_EQ(pair_.ClientReceive(8), "re:four\n");
  EXPECT_TRUE(Eventually([&] { return loop_->busy_polls() > polls; }));
}

TEST_F(ConnectionLoopTest, AWorkerThatFoundConnectionsQueuedSleepsWhenTheQueueEmpties) {
  // One worker, two connections: b's request waits while a's naps, so the
  // wait that takes it finds it ready at once.
  TlsPair b;
  ConnectionLoop::Options o = Options(100, 1, 1);
  o.busy_poll = std::chrono::milliseconds(500);
  Begin(o);
  Connect(pair_);
  Connect(b);
  pair_.ClientSend("nap\n");
  ASSERT_TRUE(Eventually([&] { return exchange_.started == 1; }));
  b.ClientSend("nap\n");
  EXPECT_EQ(pair_.ClientReceive(7), "re:nap\n");
  const std::size_t polls = loop_->busy_polls();  // b's nap holds the worker for 100 ms
  EXPECT_EQ(b.ClientReceive(7), "re:nap\n");
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(loop_->busy_polls(), polls) << "b's request was queued: the worker sleeps after it";
}

TEST_F(ConnectionLoopTest, WithoutABusyPollAWorkerNeverPolls) {
  Begin(Options(100));
  Connect(pair_);
  EchoEach(pair_, {"one\n", "two\n", "three\n"});
  EXPECT_EQ(loop_->busy_polls(), 0u);
  EXPECT_EQ(loop_->busy_poll_catches(), 0u);
}

TEST_F(ConnectionLoopTest, CutOverdueShutsDownARequestThatOutlivesItsDeadline) {
  // A client trickling its request keeps the worker reading; a waiting
  // connection is not CutOverdue's, however long it has waited.
  TlsPair waiting;
  Begin(Options(100, 2, 4));
  Connect(pair_);
  Connect(waiting);
  pair_.ClientSend("tri");  // the line never ends
  ASSERT_TRUE(Eventually([&] { return exchange_.started == 1; }));
  std::this_thread::sleep_for(60ms);
  EXPECT_EQ(loop_->CutOverdue(std::chrono::milliseconds(5000)), 0u) << "not yet overdue";
  EXPECT_EQ(loop_->CutOverdue(std::chrono::milliseconds(20)), 1u);
  EXPECT_TRUE(ClientSeesClose(pair_));
  EXPECT_TRUE(Eventually([&] { return loop_->connections() == 1; }));
  waiting.ClientSend("hi\n");
  EXPECT_EQ(waiting.ClientReceive(6), "re:hi\n");
}

TEST_F(ConnectionLoopTest, APeerThatClosesIsForgotten) {
  Begin(Options(100));
  Connect(pair_);
  pair_.ClientSend("one\n");
  EXPECT_EQ(pair_.ClientReceive(7), "re:one\n");
  SSL_shutdown(pair_.client());
  ::shutdown(pair_.client_fd(), SHUT_WR);
  EXPECT_TRUE(Eventually([&] { return loop_->connections() == 0; }));
  EXPECT_EQ(exchange_.Lines().size(), 1u);
}

TEST_F(ConnectionLoopTest, AFailedHandshakeClosesTheSocketWithoutAnExchange) {
  Begin(Options(100));
  const int sock = pair_.Connect(/*handshake=*/false);
  pair_.GiveAwayServerSocket();
  const std::string not_tls = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(::send(pair_.client_fd(), not_tls.data(), not_tls.size(), 0), static_cast<ssize_t>(not_tls.size()));
  loop_->Serve(pair_.server_ctx(), sock);
  EXPECT_TRUE(Eventually([&] { return loop_->connections() == 0; }));
  EXPECT_EQ(exchange_.answered, 0);
  // The server closed its socket: the client reads what alert there was, then the end.
  char buf[256];
  ssize_t n;
  while ((n = ::recv(pair_.client_fd(), buf, sizeof(buf), 0)) > 0) {
  }
  EXPECT_EQ(n, 0);
}

TEST_F(ConnectionLoopTest, SurplusWorkersExitWhenIdle) {
  ConnectionLoop::Options o = Options(100, 1, 4);
  o.idle_exit = 300ms;
  TlsPair slow;
  Begin(o);
  Connect(slow);
  slow.ClientSend("x");
  ASSERT_TRUE(Eventually([&] { return exchange_.started == 1; }));
  ASSERT_TRUE(Eventually([&] { return loop_->workers() == 2; })) << "the only worker is held: another starts";
  slow.ClientSend("\n");
  EXPECT_EQ(slow.ClientReceive(5), "re:x\n");
  EXPECT_TRUE(Eventually([&] { return loop_->workers() == 1; })) << "back to min_workers";
}

}  // namespace
}  // namespace ray_webhook
