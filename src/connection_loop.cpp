#include "ray_webhook/connection_loop.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <system_error>
#include <thread>

namespace ray_webhook {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

}  // namespace

struct ConnectionLoop::Connection {
  Connection(SSL* s, socket_t fd) : ssl(s), sock(fd) {}
  SSL* const ssl;
  const socket_t sock;
  SocketAddresses addresses;
  std::size_t served = 0;
  // When it began to wait for a request; 0 while a worker has it.
  std::atomic<std::int64_t> waiting_since_ms{0};
  // When its worker began the handshake or the current request; 0 while it waits.
  std::atomic<std::int64_t> busy_since_ms{0};
  bool shut = false;  // guarded by the loop's mutex; a socket is shut down once
};

ConnectionLoop::ConnectionLoop(Options options, TlsExchange& exchange) : options_(Normalized(options)), exchange_(exchange) {}

ConnectionLoop::Options ConnectionLoop::Normalized(Options o) {
  o.min_workers = std::max<std::size_t>(o.min_workers, 1);
  o.max_workers = std::max(o.max_workers, o.min_workers);
  o.active_workers = std::clamp<std::size_t>(o.active_workers, 1, o.min_workers);
  o.max_requests = std::max<std::size_t>(o.max_requests, 1);
  return o;
}

ConnectionLoop::~ConnectionLoop() { Stop(); }

bool ConnectionLoop::Start(std::string* error) {
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  epoll_event ev{};
  ev.events = EPOLLIN;  // level-triggered: once Stop() writes it, every waiting worker sees it
  ev.data.ptr = nullptr;
  if (epoll_fd_ < 0 || wake_fd_ < 0 || ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0) {
    *error = std::string("cannot set up the connection loop: ") + std::strerror(errno);
    if (epoll_fd_ >= 0) ::close(epoll_fd_);
    if (wake_fd_ >= 0) ::close(wake_fd_);
    epoll_fd_ = wake_fd_ = -1;
    return false;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < options_.min_workers; ++i) Spawn();
  supervisor_ = std::thread([this] { Supervise(); });
  return true;
}

void ConnectionLoop::Spawn() {
  try {
    std::thread([this] { Work(); }).detach();
    ++workers_;
  } catch (const std::system_error&) {
    // Out of threads: the workers there are go on, and the supervisor tries again at its next stall.
  }
}

void ConnectionLoop::Serve(SSL_CTX* ctx, socket_t sock) {
  SSL* ssl = SSL_new(ctx);
  BIO* bio = ssl != nullptr ? BIO_new_socket(sock, BIO_NOCLOSE) : nullptr;
  if (bio == nullptr) {
    SSL_free(ssl);
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return;
  }
  SSL_set_bio(ssl, bio, bio);
  SSL_set_accept_state(ssl);
  auto* c = new Connection(ssl, sock);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    connections_.insert(c);
  }
  if (stopping_) {
    Close(c, false);
    return;
  }
  // Its handshake starts when the client's first bytes arrive, on a worker.
  AwaitRequest(c, EPOLL_CTL_ADD);
}

void ConnectionLoop::AwaitRequest(Connection* c, int op) {
  c->busy_since_ms = 0;
  c->waiting_since_ms = NowMs();
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLONESHOT;
  ev.data.ptr = c;
  // After this another worker may have the connection: c is not touched again here.
  if (::epoll_ctl(epoll_fd_, op, c->sock, &ev) != 0) Close(c, false);
}

void ConnectionLoop::Work() {
  bool poll_first = false;
  const Connection* last_served = nullptr;
  for (;;) {
    // Beyond active_workers, a worker waits as a spare: more waiters in the
    // set would each be woken by the next ready connection and crowd the CPUs.
    if (pollers_.fetch_add(1) >= options_.active_workers && !WaitAsSpare()) return;
    epoll_event ev{};
    const int n = WaitForReady(ev, poll_first, last_served);
    pollers_.fetch_sub(1);
    if (n == 1 && ev.data.ptr != nullptr) {
      taken_.fetch_add(1);
      if (supervisor_asleep_.load()) WakeSupervisor();
      last_served = static_cast<Connection*>(ev.data.ptr);
      ServeReady(static_cast<Connection*>(ev.data.ptr));
    } else if (n == 1 || (n < 0 && errno != EINTR)) {  // the wake descriptor: Stop() is done
      std::lock_guard<std::mutex> lock(mutex_);
      --workers_;
      changed_.notify_all();
      return;
    }
  }
}

int ConnectionLoop::WaitForReady(epoll_event& ev, bool& poll_first, const Connection* last_served) {
  if (options_.busy_poll.count() == 0) return ::epoll_wait(epoll_fd_, &ev, 1, -1);
  int n = ::epoll_wait(epoll_fd_, &ev, 1, 0);
  if (n != 0) {
    // A wait of no time. If another connection was queued, several clients
    // are busy, and when the queue empties their next requests come in a
    // batch: sleeping lets them gather, where polling would take them one by
    // one and cost throughput (at 8 and 64 connections in bench/compare.sh).
    // The connection just served, ready again at once, is one quick client.
    poll_first = ev.data.ptr == last_served;
    return n;
  }
  const Clock::time_point start = Clock::now();
  // One worker at a time polls, so the server never spins on more than one CPU.
  if (poll_first && !polling_.exchange(true)) {
    busy_polls_.fetch_add(1, std::memory_order_relaxed);
    const Clock::time_point until = start + options_.busy_poll;
    while ((n = ::epoll_wait(epoll_fd_, &ev, 1, 0)) == 0 && Clock::now() < until) {
    }
    polling_.store(false);
    if (n == 1 && ev.data.ptr != nullptr) busy_poll_catches_.fetch_add(1, std::memory_order_relaxed);
  }
  if (n == 0) n = ::epoll_wait(epoll_fd_, &ev, 1, -1);
  // Poll before the next wait only if this one was short enough for a poll
  // to have caught it: after an idle spell the server sleeps at once again.
  poll_first = Clock::now() - start <= options_.busy_poll;
  return n;
}

bool ConnectionLoop::WaitAsSpare() {
  pollers_.fetch_sub(1);
  std::unique_lock<std::mutex> lock(mutex_);
  ++spares_;
  for (;;) {
    const bool called = spare_called_.wait_for(lock, options_.idle_exit, [this] { return calls_ > 0 || stopped_; });
    if (called && !stopped_) {
      --calls_;
      --spares_;
      pollers_.fetch_add(1);
      return true;
    }
    if (stopped_ || workers_ > options_.min_workers) {
      --spares_;
      --workers_;
      changed_.notify_all();
      return false;
    }
  }
}

void ConnectionLoop::Supervise() {
  std::uint64_t last = taken_.load();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopped_) {
    supervisor_tick_.wait_for(lock, options_.stall);
    ++supervisor_wakeups_;
    const std::uint64_t now = taken_.load();
    if (now == last && pollers_.load() > 0) {
      // Idle: a worker waits in the set, so nothing ready is left untaken.
      // Sleep until a worker takes a connection rather than wake every stall
      // (100 times a second) on a server that has nothing to do. A worker
      // sees supervisor_asleep_ after its taken_ increment, or this sees the
      // increment (both sequentially consistent).
      supervisor_asleep_.store(true);
      if (taken_.load() == last) {
        supervisor_tick_.wait(lock, [this] { return !supervisor_asleep_.load() || stopped_; });
      }
      supervisor_asleep_.store(false);
      last = taken_.load();
      continue;
    }
    // Nobody waits in the set and nothing was taken for a whole stall: the
    // active workers are held by requests that wait (a slow client, an API
    // lookup). Let one more worker take connections.
    if (!stopped_ && pollers_.load() == 0 && now == last) {
      if (spares_ > calls_) {
        ++calls_;
        spare_called_.notify_one();
      } else if (workers_ < options_.max_workers) {
        Spawn();
      }
    }
    last = now;
  }
}

void ConnectionLoop::WakeSupervisor() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    supervisor_asleep_.store(false);
  }
  supervisor_tick_.notify_one();
}

bool ConnectionLoop::Ending() const { return stopping_ || exchange_.Stopping(); }

void ConnectionLoop::ServeReady(Connection* c) {
  c->waiting_since_ms = 0;
  TlsStream stream(c->ssl, c->sock, &c->addresses, options_.read_timeout, options_.write_timeout);
  bool request_ready = true;  // the socket became readable
  if (!SSL_is_init_finished(c->ssl)) {
    c->busy_since_ms = NowMs();
    // Blocking: each read of the handshake waits at most SO_RCVTIMEO, the
    // supervisor lets another worker go on meanwhile, and CutOverdue() cuts a
    // handshake that outlives the request deadline.
    if (SSL_do_handshake(c->ssl) != 1 || Ending()) {
      Close(c, false);
      return;
    }
    request_ready = stream.HasBufferedInput();
  }
  // Only a connection whose stream holds nothing unread waits in the set:
  // bytes already read would never make its socket readable again.
  for (; request_ready; request_ready = stream.HasBufferedInput()) {
    const bool last = ++c->served >= options_.max_requests;
    bool closed = false;
    c->busy_since_ms = NowMs();
    bool ok = exchange_.Exchange(stream, last, closed);
    // The whole answer leaves before the connection can count as idle (and
    // be shut down by CloseIdle).
    ok = stream.Flush() && ok;
    if (!ok || closed || last || Ending()) {
      Close(c, ok);
      return;
    }
  }
  AwaitRequest(c, EPOLL_CTL_MOD);
}

void ConnectionLoop::Close(Connection* c, bool graceful) {
  if (graceful) SSL_shutdown(c->ssl);
  ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, c->sock, nullptr);
  {
    // Out of the set before the descriptor closes, so CloseIdle never shuts down a reused one.
    std::lock_guard<std::mutex> lock(mutex_);
    connections_.erase(c);
    changed_.notify_all();
  }
  SSL_free(c->ssl);
  ::shutdown(c->sock, SHUT_RDWR);
  ::close(c->sock);
  delete c;
}

std::size_t ConnectionLoop::ShutDownOlderThan(std::atomic<std::int64_t> Connection::*since,
                                              std::chrono::milliseconds age) {
  const std::int64_t now = NowMs();
  std::size_t n = 0;
  std::lock_guard<std::mutex> lock(mutex_);
  for (Connection* c : connections_) {
    const std::int64_t from = (c->*since).load();
    if (from != 0 && now - from >= age.count() && !c->shut) {
      // The worker that has it, or takes it next, sees the stream end and closes it.
      c->shut = true;
      ::shutdown(c->sock, SHUT_RDWR);
      ++n;
    }
  }
  return n;
}

std::size_t ConnectionLoop::CloseIdle(std::chrono::milliseconds idle_for) {
  return ShutDownOlderThan(&Connection::waiting_since_ms, idle_for);
}

std::size_t ConnectionLoop::CutOverdue(std::chrono::milliseconds limit) {
  return ShutDownOlderThan(&Connection::busy_since_ms, limit);
}

void ConnectionLoop::Stop() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (epoll_fd_ < 0 || stopping_) return;
  stopping_ = true;
  // Waiting connections are shut down, again each round for those that went
  // back to wait while this ran; busy ones close after their answer.
  while (!connections_.empty()) {
    lock.unlock();
    CloseIdle(std::chrono::milliseconds(0));
    lock.lock();
    changed_.wait_for(lock, std::chrono::milliseconds(50), [this] { return connections_.empty(); });
  }
  stopped_ = true;
  spare_called_.notify_all();
  supervisor_tick_.notify_all();
  const std::uint64_t one = 1;
  // Cannot fail short of a full counter, which is readable too.
  [[maybe_unused]] const ssize_t written = ::write(wake_fd_, &one, sizeof(one));
  changed_.wait(lock, [this] { return workers_ == 0; });
  lock.unlock();
  if (supervisor_.joinable()) supervisor_.join();
  ::close(epoll_fd_);
  ::close(wake_fd_);
  epoll_fd_ = wake_fd_ = -1;
}

std::size_t ConnectionLoop::connections() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return connections_.size();
}

std::size_t ConnectionLoop::workers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return workers_;
}

std::size_t ConnectionLoop::supervisor_wakeups() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return supervisor_wakeups_;
}

std::size_t ConnectionLoop::busy_polls() const { return busy_polls_.load(std::memory_order_relaxed); }

std::size_t ConnectionLoop::busy_poll_catches() const { return busy_poll_catches_.load(std::memory_order_relaxed); }

std::size_t ConnectionLoop::spares() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return spares_;
}

}  // namespace ray_webhook
