#include "ray_webhook/tls_connection.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

namespace ray_webhook {
namespace {

using Clock = std::chrono::steady_clock;

// Waits until the next request can be read: true when bytes (or the peer's
// close, which the read will see) arrived, false on timeout or stop.
bool AwaitRequest(const TlsStream& stream, std::chrono::milliseconds keep_alive, const TlsExchange& exchange) {
  if (exchange.Stopping()) return false;
  if (stream.HasBufferedInput()) return true;
  const auto deadline = Clock::now() + keep_alive;
  while (!exchange.Stopping()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{stream.socket(), POLLIN, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min(left, kIdleSlice).count()));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
  return false;
}

struct SslFree {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};

bool Serve(SSL_CTX* ctx, socket_t sock, const TlsConnectionLimits& limits, TlsExchange& exchange) {
  std::unique_ptr<SSL, SslFree> ssl(SSL_new(ctx));
  if (!ssl) return false;
  BIO* bio = BIO_new_socket(sock, BIO_NOCLOSE);
  if (bio == nullptr) return false;
  SSL_set_bio(ssl.get(), bio, bio);
  // Blocking: each read of the handshake waits at most SO_RCVTIMEO, and
  // ConnectionTracker cuts a handshake that outlives the request deadline.
  if (SSL_accept(ssl.get()) != 1) return false;

  TlsStream stream(ssl.get(), sock, limits.read_timeout_sec, limits.read_timeout_usec, limits.write_timeout_sec,
                   limits.write_timeout_usec);
  bool ok = false;
  for (std::size_t left = limits.max_requests; left > 0 && AwaitRequest(stream, limits.keep_alive, exchange); --left) {
    bool closed = false;
    ok = exchange.Exchange(stream, left == 1, closed);
    ok = stream.Flush() && ok;
    exchange.Answered(ssl.get());
    if (!ok || closed) break;
  }
  if (ok) SSL_shutdown(ssl.get());
  return ok;
}

}  // namespace

bool ServeTlsConnection(SSL_CTX* ctx, socket_t sock, const TlsConnectionLimits& limits, TlsExchange& exchange) {
  const bool ok = Serve(ctx, sock, limits, exchange);  // the SSL is freed on return
  ::shutdown(sock, SHUT_RDWR);
  ::close(sock);
  return ok;
}

}  // namespace ray_webhook
