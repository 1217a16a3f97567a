// ServeTlsConnection: one accepted TCP connection of the HTTPS server, from its
// TLS handshake to its close, each request read and answered through a
// TlsStream.
//
// It does for a connection what cpp-httplib 0.11's SSLServer does, except
// where that costs on every request: the stream (see tls_stream.h), and the
// wait for the next request on a kept-alive connection, which cpp-httplib
// makes as polls of 10 ms with a 1 ms sleep after each and this makes as
// polls of up to kIdleSlice.
//
// Contract: takes an accepted socket that is blocking and has SO_RCVTIMEO and
// SO_SNDTIMEO set (cpp-httplib sets them on every socket it accepts), and
// always closes it, after freeing the SSL: ConnectionTracker forgets a
// connection when OpenSSL frees it, so a descriptor is never reused while its
// SSL lives. After each Exchange, what it wrote is flushed, then Answered
// runs. The connection ends when the handshake fails, the peer closes or sends
// nothing within limits.keep_alive, Exchange returns false or sets closed,
// limits.max_requests have been served (the last Exchange is told so), or
// Stopping() turns true while it waits for a request. It ends with a
// close_notify when its last Exchange succeeded, as cpp-httplib's does.
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>

#include "ray_webhook/tls_stream.h"

namespace ray_webhook {

class TlsExchange {
 public:
  virtual ~TlsExchange() = default;
  // Reads one request from stream and writes its answer. last: the answer
  // must close the connection. Sets closed when the request asked to close.
  virtual bool Exchange(TlsStream& stream, bool last, bool& closed) = 0;
  // The answer has been handed to the kernel.
  virtual void Answered(const SSL* ssl) = 0;
  virtual bool Stopping() const = 0;
};

struct TlsConnectionLimits {
  std::size_t max_requests = 1;
  std::chrono::milliseconds keep_alive{0};
  time_t read_timeout_sec = 0, read_timeout_usec = 0;
  time_t write_timeout_sec = 0, write_timeout_usec = 0;
};

// A waiting connection notices Stopping() within this. The server's graceful
// shutdown does not wait for it: it shuts idle sockets down, which ends their wait at once.
constexpr std::chrono::milliseconds kIdleSlice{100};

// Returns whether the last exchange succeeded.
bool ServeTlsConnection(SSL_CTX* ctx, socket_t sock, const TlsConnectionLimits& limits, TlsExchange& exchange);

}  // namespace ray_webhook
