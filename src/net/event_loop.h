// EventLoop: one thread's epoll loop over its share of the connections, and
// ConnectionLoop::Impl, the state all the loops of a ConnectionLoop share.
// The two stay together: each loop works on the shared state (the
// listeners, the pool, the counters, the stop flags) and the shared state
// owns the loops, so no source uses one without the other. JobDone, a
// finished job on its way back from a worker, is the loop's alone.
//
// EventLoop's members are defined by what they do: event_loop.cpp, the loop
// itself and its deadlines; event_loop_accept.cpp, accepting and shedding;
// event_loop_serve.cpp, one connection's phases, its transport and its
// session. ConnectionLoop's interface is connection_loop.cpp.
//
// Contract: everything here belongs to one event loop's thread, apart from
// what is marked otherwise (the done list, the loop-wide counters in Impl).
#pragma once

#include <sys/epoll.h>
#include <sys/socket.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "connection.h"
#include "listener.h"
#include "ray_webhook/mutex.h"
#include "ray_webhook/net/blocking_pool.h"
#include "ray_webhook/net/connection_loop.h"
#include "ray_webhook/net/session.h"
#include "ray_webhook/net/transport.h"
#include "ray_webhook/thread_annotations.h"

namespace ray_webhook {

// Requests served from one connection before the loop turns to the others.
inline constexpr int kRequestsPerTurn = 4;
// A connection that has not sent a request yet, when idle ones are being
// closed: Go's http.Server waits 5 s for such a one in Shutdown.
inline constexpr std::chrono::milliseconds kFreshConnectionGrace{2000};
// How often deadlines are checked while a connection has one running.
inline constexpr std::chrono::milliseconds kBusyTick{100};
inline constexpr std::chrono::milliseconds kIdleTick{1000};

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
