#include "ray_webhook/kube/https_stream.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>

namespace ray_webhook {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

// A port that takes connections (the kernel's backlog) and never says a word: the TLS handshake waits.
class SilentListener {
 public:
  SilentListener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&addr), len) == 0 && listen(fd_, 8) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port_ = ntohs(addr.sin_port);
    }
  }
  ~SilentListener() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST(HttpsStreamLinesTest, StopEndsAHandshakeThatNeverCompletes) {
  SilentListener silent;
  ASSERT_NE(silent.port(), 0);
  StreamLimits limits;
  limits.connect_timeout = 30s;
  const Clock::time_point started = Clock::now();
  const StreamEnd end = HttpsStreamLines(
      HttpsTarget{"127.0.0.1", silent.port()}, "/api/v1/pods?watch=1", {}, "", limits,
      [](std::string_view) { return Status::Ok(); }, [&] { return Clock::now() - started > 300ms; });
  EXPECT_EQ(end.how, StreamEnd::How::kStopped) << end.reason;
  EXPECT_LT(Clock::now() - started, 2s);
}

TEST(HttpsStreamLinesTest, NoConnectionIsBroken) {
  StreamLimits limits;
  limits.connect_timeout = 2s;
  const StreamEnd end =
      HttpsStreamLines(HttpsTarget{"127.0.0.1", 1}, "/", {}, "", limits, [](std::string_view) { return Status::Ok(); });
  EXPECT_EQ(end.how, StreamEnd::How::kBroken);
  EXPECT_NE(end.reason.find("cannot connect"), std::string::npos) << end.reason;
}

}  // namespace
}  // namespace ray_webhook
