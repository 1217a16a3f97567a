#include "ray_webhook/net/connection_loop.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>

#include "event_loop.h"

namespace ray_webhook {

ConnectionLoop::ConnectionLoop(Options options) {
  options.event_loops = std::max<std::size_t>(options.event_loops, 1);
  options.max_connections = std::max<std::size_t>(options.max_connections, 1);
  impl_ = std::make_unique<Impl>(options);
}

ConnectionLoop::~ConnectionLoop() { Stop(); }

void ConnectionLoop::AddListener(int fd, SSL_CTX* ctx, SessionFactory& sessions) {
  impl_->listeners.push_back(std::make_unique<Listener>(fd, ctx, sessions));
}

Status ConnectionLoop::Start() {
  Impl& m = *impl_;
  for (auto& l : m.listeners) {
    const int flags = ::fcntl(l->fd, F_GETFL, 0);
    ::fcntl(l->fd, F_SETFL, flags | O_NONBLOCK);
  }
  for (std::size_t i = 0; i < m.options.event_loops; ++i) {
    auto loop = std::make_unique<EventLoop>(m);
    if (Status opened = loop->Open(); !opened.ok()) {
      if (loop->epoll_fd >= 0) ::close(loop->epoll_fd);
      if (loop->wake_fd >= 0) ::close(loop->wake_fd);
      Stop();
      return opened;
    }
    m.loops.push_back(std::move(loop));
  }
  m.listeners_open = m.loops.size();
  for (auto& loop : m.loops) {
    EventLoop* l = loop.get();
    l->thread = std::thread([l] { l->Run(); });
  }
  return Status::Ok();
}

void ConnectionLoop::StopAccepting() {
  // Each loop accepts what is queued, then stops watching the listeners.
  impl_->accepting.store(false);
  for (auto& l : impl_->loops) l->Wake();
}

void ConnectionLoop::CloseIdle() {
  impl_->closing_idle.store(true);
  for (auto& l : impl_->loops) l->Wake();
}

void ConnectionLoop::Stop() {
  Impl& m = *impl_;
  if (m.stopped) return;
  m.stopped = true;
  m.accepting.store(false);
  m.stopping.store(true);
  for (auto& l : m.loops) l->Wake();
  for (auto& l : m.loops) {
    if (l->thread.joinable()) l->thread.join();
  }
  // Every loop waited for its jobs before it left: the workers are idle.
  m.pool.Stop();
  for (auto& l : m.loops) {
    if (l->epoll_fd >= 0) ::close(l->epoll_fd);
    if (l->wake_fd >= 0) ::close(l->wake_fd);
  }
  for (auto& l : m.listeners) ::close(l->fd);
  m.listeners.clear();
}

std::size_t ConnectionLoop::connections() const { return impl_->connections.load(); }
std::size_t ConnectionLoop::connections_cut() const { return impl_->cut.load(); }
std::size_t ConnectionLoop::connections_shed() const { return impl_->shed.load(); }
std::size_t ConnectionLoop::connections_refused() const { return impl_->refused.load(); }
std::size_t ConnectionLoop::busy_polls() const { return impl_->busy_polls.load(); }

}  // namespace ray_webhook
