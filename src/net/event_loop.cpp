// EventLoop, the loop itself: its descriptors, waiting on epoll (with the
// busy poll), dispatching events, and the deadlines (Scan).
#include "event_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>

namespace ray_webhook {

Status EventLoop::Open() {
  epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = nullptr;
  if (epoll_fd < 0 || wake_fd < 0 || ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, wake_fd, &ev) != 0) {
    return Status::Error(std::string("cannot set up an event loop: ") + std::strerror(errno));
  }
  return Listen();
}

Status EventLoop::Listen() {
  for (auto& l : impl.listeners) {
    epoll_event ev{};
    // One loop is woken per new connection, not all of them.
    ev.events = EPOLLIN | EPOLLEXCLUSIVE;
    ev.data.ptr = static_cast<Pollable*>(l.get());
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, l->fd, &ev) != 0) {
      return Status::Error(std::string("cannot watch a listening socket: ") + std::strerror(errno));
    }
  }
  listening = true;
  return Status::Ok();
}

void EventLoop::Unlisten() {
  for (auto& l : impl.listeners) ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, l->fd, nullptr);
}

void EventLoop::Wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] const ssize_t n = ::write(wake_fd, &one, sizeof one);
}

void EventLoop::PostDone(JobDone d) {
  {
    MutexLock lock(&done_mutex);
    done.push_back(std::move(d));
  }
  Wake();
}

void EventLoop::Run() {
  epoll_event events[64];
  next_scan = Clock::now();
  for (;;) {
    now = Clock::now();
    if (listening && !impl.accepting) StopListening();
    if (impl.stopping && jobs == 0) break;
    if (impl.stopping) CloseAllButJobs();
    const int n = Wait(events, 64, Timeout());
    now = Clock::now();
    for (int i = 0; i < n; ++i) {
      auto* p = static_cast<Pollable*>(events[i].data.ptr);
      if (p == nullptr) {
        std::uint64_t value;
        [[maybe_unused]] const ssize_t r = ::read(wake_fd, &value, sizeof value);
      } else if (p->listener) {
        if (listening) Accept(static_cast<Listener*>(p));
      } else {
        OnEvent(static_cast<Connection*>(p), events[i].events);
      }
    }
    TakeDone();
    RunPending();
    if (now >= next_scan) Scan();
  }
  CloseAllButJobs();
}

int EventLoop::Timeout() const {
  if (!pending.empty()) return 0;
  if (impl.stopping) return static_cast<int>(kBusyTick.count());
  if (conns.empty() && !listeners_paused) return -1;
  const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(next_scan - now).count();
  return static_cast<int>(std::clamp<std::int64_t>(until, 0, kIdleTick.count()));
}

void EventLoop::ArmTimers() {
  timers_armed = true;
  next_scan = std::min(next_scan, now + kBusyTick);
}

int EventLoop::Wait(epoll_event* events, int max, int timeout_ms) {
  if (o.busy_poll.count() > 0 && poll_next && timeout_ms != 0 && !impl.polling.exchange(true)) {
    // One quick client: its next request comes within microseconds, and a
    // sleep would add the wake-up of a halted CPU to each round trip.
    impl.busy_polls.fetch_add(1, std::memory_order_relaxed);
    const Clock::time_point until = Clock::now() + o.busy_poll;
    int n;
    do {
      n = ::epoll_wait(epoll_fd, events, max, 0);
    } while (n == 0 && Clock::now() < until);
    impl.polling.store(false);
    if (n != 0) {
      poll_next = n == 1;
      return n;
    }
  }
  const Clock::time_point start = Clock::now();
  const int n = ::epoll_wait(epoll_fd, events, max, timeout_ms);
  // Several ready connections come in batches that a sleep lets gather;
  // after a long wait (an idle spell) sleep at once again.
  poll_next = n == 1 && Clock::now() - start <= o.busy_poll;
  return n < 0 ? 0 : n;
}

void EventLoop::CloseAllButJobs() {
  for (std::size_t i = conns.size(); i-- > 0;) {
    if (i < conns.size() && conns[i]->phase != Connection::Phase::kJob) Close(conns[i]);
  }
}

void EventLoop::Scan() {
  if (listeners_paused && now >= resume_listeners_at && impl.accepting) {
    listeners_paused = false;
    // Watching a listener again fails only without kernel memory; it then
    // stays unwatched, and the other listeners serve on.
    static_cast<void>(Listen());
  }
  const bool closing_idle = impl.closing_idle.load();
  timers_armed = listeners_paused || (closing_idle && !conns.empty());
  for (std::size_t i = conns.size(); i-- > 0;) {
    if (i >= conns.size()) continue;
    Connection* c = conns[i];
    if (c->busy || c->phase == Connection::Phase::kLinger || c->phase == Connection::Phase::kJob) {
      timers_armed = true;
    }
    switch (c->phase) {
      case Connection::Phase::kLinger:
        if (now - c->linger_since >= o.linger) Close(c);
        break;
      case Connection::Phase::kJob:
        if (!c->cut && now - c->busy_since >= o.blocking_timeout) {
          // The worker still reads the connection's buffer: only end the socket.
          c->cut = true;
          impl.cut.fetch_add(1, std::memory_order_relaxed);
          ::shutdown(c->fd, SHUT_RDWR);
        }
        break;
      default:
        if (c->busy) {
          if (now - c->busy_since >= o.request_timeout) {
            impl.cut.fetch_add(1, std::memory_order_relaxed);
            Close(c);
          }
        } else if (now - c->idle_since >= o.idle_timeout) {
          StartLinger(c);
        } else if (closing_idle && (c->session->Used() || now - c->accepted_at >= kFreshConnectionGrace) &&
                   NothingPending(c)) {
          StartLinger(c);
        }
    }
  }
  next_scan = now + (timers_armed ? kBusyTick : kIdleTick);
}

}  // namespace ray_webhook
