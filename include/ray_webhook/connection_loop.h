// ConnectionLoop: the server's TLS connections, served by a few threads.
//
// cpp-httplib 0.11 gives every connection a thread of its own for as long as
// it is open, keep-alive waits included, so 64 busy connections on one CPU
// are 64 runnable threads taking turns, each request on a stack and caches
// that others have used since, and the scheduler decides which request waits.
// Here a connection waits for its next request in one epoll set
// (EPOLLONESHOT), not on a thread. Only active_workers workers (about the
// CPUs) wait in the set; a worker takes one ready connection, serves what it
// has read, puts it back, and takes the next, so under load the same warm
// threads serve request after request, in the order they became ready. The
// other workers wait as spares. A supervisor calls a spare, or starts a
// worker, when nobody waits in the set and no connection was taken for a
// whole `stall`: the active workers are then held by requests that wait (a
// slow client, a Kubernetes API lookup), and a slow request never holds up
// the others for longer than that. While workers wait in the set and nothing
// is taken, the supervisor sleeps until a worker takes a connection. Requests
// are read and answered through TlsStream (tls_stream.h).
//
// Busy polling (Options::busy_poll): a worker that finds no connection ready,
// and whose last wait also found none and was short, polls the set for up to
// busy_poll before it sleeps in it. A client that sends its next request
// within that time (one connection, request after request) then does not
// wait for a sleeping CPU to wake: on a virtual machine without guest halt
// polling that wake-up is a good part of a request's round trip. Costs are
// bounded: one worker polls at a time; a worker that found another
// connection queued sleeps when the queue empties (several busy clients send
// in batches, which sleeping lets gather); and after a wait longer than
// busy_poll (an idle spell) the next wait sleeps at once, so an idle server
// does not spin.
//
// Contract: Serve() takes an accepted socket that is blocking and has
// SO_RCVTIMEO and SO_SNDTIMEO set (cpp-httplib sets them on every socket it
// accepts) and from then on owns the connection, handshake included: it is
// always closed, on its worker, and never shut down by CloseIdle() or
// CutOverdue() after its descriptor is closed. After each Exchange, what it
// wrote is flushed before the connection waits again. A connection is closed
// when the handshake fails, the peer closes, Exchange fails or sets closed,
// Options::max_requests have been served (the last Exchange is told so),
// Stopping() is true after an answer, CloseIdle() or Stop() shuts it down
// while it waits, or CutOverdue() while a worker has it. Workers start on
// demand up to max_workers; those above min_workers exit after idle_exit as
// spares. Thread-safe.
#pragma once

#include <openssl/ssl.h>
#include <sys/epoll.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_set>

#include "ray_webhook/tls_stream.h"

namespace ray_webhook {

class TlsExchange {
 public:
  virtual ~TlsExchange() = default;
  // Reads one request from stream and writes its answer. last: the answer
  // must close the connection. Sets closed when the request asked to close.
  virtual bool Exchange(TlsStream& stream, bool last, bool& closed) = 0;
  // The server is stopping: connections close after their current answer.
  virtual bool Stopping() const = 0;
};

class ConnectionLoop {
 public:
  struct Options {
    // Workers kept, and at most max_workers (each at least one, and at least min_workers).
    std::size_t min_workers = 1;
    std::size_t max_workers = 1;
    // Workers that wait in the epoll set at once; the others wait as spares.
    // About the CPUs the server may use: each waiter is woken by the next
    // ready connection, and more runnable workers than CPUs only take turns.
    // From 1 to min_workers.
    std::size_t active_workers = 1;
    // A spare is called (or a worker started) when nobody waits in the set
    // and no connection was taken for this long.
    std::chrono::milliseconds stall{10};
    // After a short wait, a worker that finds the set empty polls it this
    // long before it sleeps in it (0: never). A request that comes within it
    // is taken without the wake-up of a sleeping CPU; see WaitForReady.
    std::chrono::microseconds busy_poll{0};
    std::size_t max_requests = 1;  // per connection
    std::chrono::milliseconds idle_exit{60000};
    // For TlsStream's is_readable and is_writable.
    std::chrono::microseconds read_timeout{5000000};
    std::chrono::microseconds write_timeout{5000000};
  };

  ConnectionLoop(Options options, TlsExchange& exchange);
  // Stops first.
  ~ConnectionLoop();
  ConnectionLoop(const ConnectionLoop&) = delete;
  ConnectionLoop& operator=(const ConnectionLoop&) = delete;

  // Creates the epoll set and starts min_workers. On failure says why.
  bool Start(std::string* error);
  // Takes the connection on sock; a worker does its TLS handshake when the
  // client's first bytes arrive. Does not block. Not after Stop() has begun.
  void Serve(SSL_CTX* ctx, socket_t sock);
  // Shuts down connections that have waited for a request longer than
  // idle_for (0: all that wait); their workers close them. Returns how many.
  std::size_t CloseIdle(std::chrono::milliseconds idle_for);
  // Shuts down connections whose handshake or current request began at
  // least limit ago: a client trickling a byte a second never trips a per-read
  // timeout, so only a deadline per request stops it. Returns how many.
  std::size_t CutOverdue(std::chrono::milliseconds limit);
  // Lets every connection finish its current request, closes it, and joins
  // the workers. Connections waiting for a request are shut down.
  void Stop();

  std::size_t connections() const;
  std::size_t workers() const;
  std::size_t spares() const;  // workers waiting to be called
  std::size_t supervisor_wakeups() const;
  std::size_t busy_polls() const;         // polls begun
  std::size_t busy_poll_catches() const;  // connections taken while polling

 private:
  struct Connection;
  static Options Normalized(Options o);
  void Spawn();  // with mutex_ held
  void Work();
  // Waits for the next ready connection (or the wake descriptor), as
  // epoll_wait. When none is ready, poll_first is set and no other worker
  // polls, it first polls for up to busy_poll; then sleeps. Afterwards
  // poll_first says whether the wait took at most busy_poll without finding
  // a connection other than last_served ready at once.
  int WaitForReady(epoll_event& ev, bool& poll_first, const Connection* last_served);
  // Returns false when the worker is to exit.
  bool WaitAsSpare();
  void Supervise();
  void WakeSupervisor();
  void Close(Connection* c, bool graceful);
  void ServeReady(Connection* c);
  // Stop() has begun or the server is stopping: connections close instead of waiting again.
  bool Ending() const;
  // Shuts down the connections whose clock `since` runs and is at least age old.
  std::size_t ShutDownOlderThan(std::atomic<std::int64_t> Connection::*since, std::chrono::milliseconds age);
  // Puts c (back) in the set with op (EPOLL_CTL_ADD or _MOD); closes it if that fails.
  void AwaitRequest(Connection* c, int op);

  const Options options_;
  TlsExchange& exchange_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // an eventfd in the set: readable once Stop() is done
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::condition_variable spare_called_;
  std::condition_variable supervisor_tick_;  // ends Supervise()'s sleep or wait at once
  std::unordered_set<Connection*> connections_;
  std::size_t workers_ = 0;  // the rest guarded by mutex_ too
  std::size_t spares_ = 0;
  std::size_t calls_ = 0;
  std::size_t supervisor_wakeups_ = 0;
  bool stopped_ = false;
  std::atomic<std::size_t> pollers_{0};
  std::atomic<std::uint64_t> taken_{0};
  std::atomic<bool> supervisor_asleep_{false};
  std::atomic<bool> polling_{false};
  std::atomic<std::size_t> busy_polls_{0};
  std::atomic<std::size_t> busy_poll_catches_{0};
  std::atomic<bool> stopping_{false};
  std::thread supervisor_;
};

}  // namespace ray_webhook
