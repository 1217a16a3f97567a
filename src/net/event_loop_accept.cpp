// EventLoop, accepting: new connections up to the budget, the oldest idle
// one shed to make room, the listeners paused for want of descriptors and
// given up when the server stops accepting.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

#include "event_loop.h"

namespace ray_webhook {

void EventLoop::Accept(Listener* l) {
  for (int i = 0; i < 64; ++i) {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    const int fd = ::accept4(l->fd, reinterpret_cast<sockaddr*>(&addr), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if ((errno == EMFILE || errno == ENFILE) && ShedOldestIdle()) continue;
      if (errno == EMFILE || errno == ENFILE) PauseListeners();
      return;
    }
    // The slot is taken before the check, so two loops never both take the last one.
    if (impl.connections.fetch_add(1) >= o.max_connections && !ShedOldestIdle()) {
      impl.connections.fetch_sub(1);
      impl.refused.fetch_add(1, std::memory_order_relaxed);
      ::close(fd);
      continue;
    }
    if (!Adopt(l, fd, addr)) impl.connections.fetch_sub(1);
  }
}

void EventLoop::PauseListeners() {
  // Out of descriptors with nothing idle to close: a level-triggered
  // listener would wake this loop at once, over and over.
  Unlisten();
  listeners_paused = true;
  resume_listeners_at = now + kBusyTick;
  ArmTimers();
}

void EventLoop::StopListening() {
  // What is queued was accepted by the kernel for this server: serve it.
  for (auto& l : impl.listeners) Accept(l.get());
  if (!listeners_paused) Unlisten();
  listening = false;
  listeners_paused = false;
  if (impl.listeners_open.fetch_sub(1) == 1) {
    for (auto& l : impl.listeners) ::shutdown(l->fd, SHUT_RDWR);
  }
}

bool EventLoop::Adopt(Listener* l, int fd, const sockaddr_storage& peer) {
  int yes = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
  auto* c = new Connection();
  c->loop = this;
  c->listener = l;
  c->fd = fd;
  c->addresses = PeerAddressesOf(fd, peer);
  c->transport = l->ctx != nullptr ? MakeTlsTransport(fd, l->ctx) : MakePlainTransport(fd);
  if (c->transport == nullptr) {
    delete c;
    return false;
  }
  if (l->ctx != nullptr) c->phase = Connection::Phase::kHandshake;
  c->session = l->sessions.Open(*c, c->addresses);
  c->accepted_at = c->idle_since = now;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.ptr = static_cast<Pollable*>(c);
  if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
    delete c;
    return false;
  }
  c->index = conns.size();
  conns.push_back(c);
  return true;
}

bool EventLoop::LooksIdle(const Connection* c) {
  if (c->busy || c->session->HasInput()) return false;
  if (c->phase != Connection::Phase::kRead && c->phase != Connection::Phase::kHandshake) return false;
  return !c->transport->Buffered();
}

bool EventLoop::NothingPending(const Connection* c) {
  int queued = 0;
  return LooksIdle(c) && ::ioctl(c->fd, FIONREAD, &queued) == 0 && queued == 0;
}

bool EventLoop::ShedOldestIdle() {
  // One pass without system calls; the socket is asked only about the
  // oldest (an ioctl on each of 2,000 connections, for each of 1,000 new
  // ones, took over a second). One that has bytes waiting is passed over.
  Connection* oldest = nullptr;
  std::vector<Connection*> passed;
  for (int tries = 0; tries < 8; ++tries) {
    oldest = nullptr;
    for (Connection* c : conns) {
      if (LooksIdle(c) && (oldest == nullptr || c->idle_since < oldest->idle_since) &&
          std::find(passed.begin(), passed.end(), c) == passed.end()) {
        oldest = c;
      }
    }
    if (oldest == nullptr || NothingPending(oldest)) break;
    passed.push_back(oldest);
    oldest = nullptr;
  }
  if (oldest == nullptr) return false;
  impl.shed.fetch_add(1, std::memory_order_relaxed);
  oldest->transport->Shutdown();
  Close(oldest);
  return true;
}

}  // namespace ray_webhook
