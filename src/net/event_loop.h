// EventLoop and the state it keeps per connection: the inside of
// ConnectionLoop, shared by its sources (connection_loop.cpp: the public
// interface; event_loop.cpp: the epoll loop, accepting, shedding, deadlines;
// connection.cpp: one connection's phases, its transport and its session).
//
// Contract: everything here belongs to one event loop's thread, apart from
// what is marked otherwise (the done list, the loop-wide counters in Impl).
// A Connection is a SessionHost: what its session hands out runs on the
// loop's BlockingPool, and the connection waits in kJob, changing nothing of
// the session's, until the loop takes the job back (TakeDone).
#pragma once

#include <sys/epoll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "ray_webhook/mutex.h"
#include "ray_webhook/net/blocking_pool.h"
#include "ray_webhook/net/connection_loop.h"
#include "ray_webhook/net/peer_addresses.h"
#include "ray_webhook/net/session.h"
#include "ray_webhook/net/transport.h"
#include "ray_webhook/thread_annotations.h"

namespace ray_webhook {

using Clock = std::chrono::steady_clock;

// Requests served from one connection before the loop turns to the others.
inline constexpr int kRequestsPerTurn = 4;
// A connection that has not sent a request yet, when idle ones are being
// closed: Go's http.Server waits 5 s for such a one in Shutdown.
inline constexpr std::chrono::milliseconds kFreshConnectionGrace{2000};
// How often deadlines are checked while a connection has one running.
inline constexpr std::chrono::milliseconds kBusyTick{100};
inline constexpr std::chrono::milliseconds kIdleTick{1000};

// What an epoll event points at: a listener, a connection, or (null) the wake descriptor.
struct Pollable {
  bool listener;
};

struct Listener : Pollable {
  Listener(int f, SSL_CTX* c, SessionFactory& s) : Pollable{true}, fd(f), ctx(c), sessions(s) {}
  const int fd;
  SSL_CTX* const ctx;
  SessionFactory& sessions;
};

struct EventLoop;

struct Connection final : Pollable, SessionHost {
  enum class Phase { kHandshake, kRead, kJob, kWrite, kLinger };
  Connection() : Pollable{false} {}

  void RunBlocking(std::function<void()> work) override;
  bool Stopping() const override;

  EventLoop* loop = nullptr;
  Listener* listener = nullptr;
  std::unique_ptr<Transport> transport;
  std::unique_ptr<Session> session;  // destroyed before the transport
  int fd = -1;
  Phase phase = Phase::kRead;
  std::size_t index = 0;  // in its loop's list

  std::size_t out_sent = 0;
  bool answer_in_out = false;  // the session's output holds an answer, not an interim response
  bool close_after_write = false;

  std::uint32_t interest = EPOLLIN;
  bool registered = true;
  bool pending = false;  // in its loop's pending list
  bool cut = false;      // shut down by its deadline while a worker had it
  bool busy = false;     // a handshake or request is under way
  Clock::time_point accepted_at, busy_since, idle_since, linger_since;
  PeerAddresses addresses;
};

struct JobDone {
  Connection* connection;
};

struct ConnectionLoop::Impl {
  explicit Impl(Options o) : options(o), pool(o.max_blocking_workers) {}

  const Options options;
  std::vector<std::unique_ptr<Listener>> listeners;
  std::vector<std::unique_ptr<EventLoop>> loops;
  BlockingPool pool;
  std::atomic<std::size_t> connections{0};
  std::atomic<std::size_t> cut{0}, shed{0}, refused{0}, busy_polls{0};
  std::atomic<bool> accepting{true}, closing_idle{false}, stopping{false};
  std::atomic<bool> polling{false};
  std::atomic<std::size_t> listeners_open{0};  // loops that still listen
  bool stopped = false;
};

struct EventLoop {
  explicit EventLoop(ConnectionLoop::Impl& i) : impl(i), o(i.options) {}

  ConnectionLoop::Impl& impl;
  const ConnectionLoop::Options& o;
  int epoll_fd = -1;
  int wake_fd = -1;
  std::thread thread;
  std::vector<Connection*> conns;
  std::vector<Connection*> pending;
  Mutex done_mutex;
  std::vector<JobDone> done GUARDED_BY(done_mutex);  // finished jobs, posted by the workers
  std::size_t jobs = 0;
  bool listening = false;
  bool listeners_paused = false;
  Clock::time_point resume_listeners_at;
  Clock::time_point next_scan;
  bool poll_next = false;
  // A connection has a deadline running (a handshake, a request, a linger):
  // deadlines are then checked every kBusyTick, else every kIdleTick.
  bool timers_armed = false;
  Clock::time_point now;

  Status Open();

  Status Listen();

  void Unlisten();

  void Wake();

  void PostDone(JobDone d);

  // ---- the loop ----

  void Run();

  int Timeout() const;

  void ArmTimers();

  int Wait(epoll_event* events, int max, int timeout_ms);

  // ---- accepting ----

  void Accept(Listener* l);

  void PauseListeners();

  void StopListening();

  // Serves fd from now on, in the slot Accept took; false when it could not (fd closed).
  bool Adopt(Listener* l, int fd, const sockaddr_storage& peer);

  // Idle as far as this loop knows: no request under way, nothing buffered here or in OpenSSL.
  static bool LooksIdle(const Connection* c);

  // Nothing the peer sent is waiting: neither in the buffer, in OpenSSL, nor in the socket.
  static bool NothingPending(const Connection* c);

  bool ShedOldestIdle();

  // ---- serving ----

  void OnEvent(Connection* c, std::uint32_t events);

  void Want(Connection* c, std::uint32_t events);

  void Deregister(Connection* c);

  void MarkBusy(Connection* c);

  void AddPending(Connection* c);

  void RunPending();
  std::vector<Connection*>* current_batch_ = nullptr;

  void Advance(Connection* c);

  // What the session asked for, other than more bytes.
  void Act(Connection* c, Session::Next next);

  // From the session, on this loop's thread: its work runs on a worker.
  void StartJob(Connection* c, std::function<void()> work);

  void TakeDone();

  // ---- transport ----

  Io Fill(Connection* c);

  Io Flush(Connection* c);

  // ---- closing ----

  // close_notify and FIN now; what the peer still sends is read and dropped
  // until it closes or `linger` passes, so a reset never destroys the answer.
  void StartLinger(Connection* c);

  void DrainLinger(Connection* c);

  void Close(Connection* c);

  void CloseAllButJobs();

  // Deadlines, idle connections, and listeners paused for want of descriptors.
  void Scan();
};

}  // namespace ray_webhook
