// ConnectionLoop: every connection of the server, as state, served by one
// event loop per CPU; what the bytes mean is its listener's Session's affair.
//
// Contract: the loop owns every socket it accepts and all I/O on it, which
// never blocks: a Transport (TLS or plain) per connection, whose handshake
// advances as its bytes arrive. It reads into the connection's Session,
// writes what the session answers, in order, one answer at a time (a
// connection that does not read its answers stops being read), and runs the
// work a session hands out (the Kubernetes API lookup) on a blocking worker,
// started on demand up to max_blocking_workers, while the connection waits
// without holding the loop. A connection that pipelines is served a few
// requests per turn, so it never holds the loop's other connections for long.
//
// Timers, each enforced and never waited out: a handshake or request that
// outlives request_timeout (blocking_timeout on a worker) is cut; a
// connection idle for idle_timeout is closed. At most max_connections are
// open: a new one beyond it closes the loop's oldest idle connection, else
// is closed at once. Closing is graceful (TLS close_notify, then FIN, then
// what the peer still sends is read and dropped for up to `linger`), so an
// answer is never lost to a reset, and an idle connection is closed only
// when nothing it sent is waiting to be read.
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/status.h"
#include "ray_webhook/net/session.h"

namespace ray_webhook {

class ConnectionLoop {
 public:
  struct Options {
    std::size_t event_loops = 1;  // about the CPUs the process may use
    std::size_t max_blocking_workers = 64;
    std::size_t max_connections = 2048;
    // From a handshake's or a request's first byte to the end of its answer.
    std::chrono::milliseconds request_timeout{10000};
    // The same for a request answered on a blocking worker.
    std::chrono::milliseconds blocking_timeout{12000};
    std::chrono::milliseconds idle_timeout{30000};
    std::chrono::milliseconds linger{2000};
    // After a short wait that found one connection ready, an event loop polls
    // this long before it sleeps again (0: never); one loop polls at a time.
    std::chrono::microseconds busy_poll{0};
  };

  explicit ConnectionLoop(Options options);
  // Stops first.
  ~ConnectionLoop();
  ConnectionLoop(const ConnectionLoop&) = delete;
  ConnectionLoop& operator=(const ConnectionLoop&) = delete;

  // Before Start(): connections accepted on the listening socket fd are
  // served with TLS from ctx, or in plain text when ctx is null, each by a
  // session from `sessions`. The loop owns fd from now on.
  void AddListener(int fd, SSL_CTX* ctx, SessionFactory& sessions);
  // Starts the event loops, or says why it could not.
  Status Start();
  // Accepts what is already queued on the listeners, then closes them.
  void StopAccepting();
  // From now on, closes idle connections once nothing is pending on them (a
  // connection that has not sent its first request yet gets 2 s first).
  void CloseIdle();
  // Waits for requests on blocking workers, closes every connection, and
  // joins every thread.
  void Stop();

  std::size_t connections() const;
  std::size_t connections_cut() const;      // past their deadline
  std::size_t connections_shed() const;     // idle ones closed for a new one
  std::size_t connections_refused() const;  // closed at once: the limit held
  std::size_t busy_polls() const;           // times an event loop polled instead of sleeping

 private:
  friend struct EventLoop;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ray_webhook
