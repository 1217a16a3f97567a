// Connection: one accepted socket, as state that its event loop advances.
//
// Contract: everything here belongs to its loop's thread. A Connection is
// the SessionHost of its session: what the session hands out runs on the
// loop's BlockingPool, and the connection waits in kJob, changing nothing of
// the session's, until the loop takes the job back (EventLoop::TakeDone).
// The loop creates it on accept and deletes it on close; the session goes
// before the transport it reads from.
#pragma once

#include <sys/epoll.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

#include "pollable.h"
#include "ray_webhook/net/peer_addresses.h"
#include "ray_webhook/net/session.h"
#include "ray_webhook/net/transport.h"

namespace ray_webhook {

// The clock of every deadline of the event loops.
using Clock = std::chrono::steady_clock;

struct EventLoop;
struct Listener;

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

}  // namespace ray_webhook
