#include "ray_webhook/connection_tracker.h"

#include <sys/socket.h>

#include <atomic>

namespace ray_webhook {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

// The tracker of each SSL_CTX, found from a connection in OpenSSL's callbacks.
int CtxIndex() {
  static const int index = SSL_CTX_get_ex_new_index(0, nullptr, nullptr, nullptr, nullptr);
  return index;
}

}  // namespace

struct ConnectionTracker::Connection {
  int fd;
  std::atomic<bool> busy{false};
  std::atomic<std::int64_t> since_ms;
  bool shut = false;  // guarded by the tracker's mutex; a socket is shut down once
};

ConnectionTracker::ConnectionTracker(Limits limits) : limits_(limits) {}

ConnectionTracker::~ConnectionTracker() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Connection* c : connections_) delete c;
}

bool ConnectionTracker::Install(SSL_CTX* ctx) {
  if (CtxIndex() < 0) return false;
  ssl_index_ = SSL_get_ex_new_index(0, this, nullptr, nullptr, &ConnectionTracker::OnFree);
  if (ssl_index_ < 0 || SSL_CTX_set_ex_data(ctx, CtxIndex(), this) != 1) return false;
  SSL_CTX_set_info_callback(ctx, &ConnectionTracker::OnInfo);
  return true;
}

void ConnectionTracker::OnInfo(const SSL* ssl, int where, int /*ret*/) {
  if ((where & SSL_CB_HANDSHAKE_START) == 0) return;
  auto* self = static_cast<ConnectionTracker*>(SSL_CTX_get_ex_data(SSL_get_SSL_CTX(ssl), CtxIndex()));
  if (!self || SSL_get_ex_data(ssl, self->ssl_index_)) return;  // TLS 1.3 post-handshake messages start again
  auto* c = new Connection{SSL_get_fd(ssl), {false}, {NowMs()}, false};
  SSL_set_ex_data(const_cast<SSL*>(ssl), self->ssl_index_, c);
  std::lock_guard<std::mutex> lock(self->mutex_);
  self->connections_.insert(c);
}

void ConnectionTracker::OnFree(void* /*parent*/, void* ptr, CRYPTO_EX_DATA* /*ad*/, int /*idx*/, long /*argl*/,
                               void* argp) {
  if (!ptr) return;
  auto* self = static_cast<ConnectionTracker*>(argp);
  auto* c = static_cast<Connection*>(ptr);
  {
    std::lock_guard<std::mutex> lock(self->mutex_);
    self->connections_.erase(c);
  }
  delete c;
}

ConnectionTracker::Connection* ConnectionTracker::Find(const SSL* ssl) const {
  return ssl ? static_cast<Connection*>(SSL_get_ex_data(ssl, ssl_index_)) : nullptr;
}

void ConnectionTracker::RequestStarted(const SSL* ssl) {
  if (Connection* c = Find(ssl)) {
    c->since_ms = NowMs();
    c->busy = true;
  }
}

void ConnectionTracker::RequestFinished(const SSL* ssl) {
  if (Connection* c = Find(ssl)) {
    c->since_ms = NowMs();
    c->busy = false;
  }
}

std::size_t ConnectionTracker::CloseIdle() {
  std::size_t n = 0;
  std::lock_guard<std::mutex> lock(mutex_);
  for (Connection* c : connections_) {
    if (!c->busy && !c->shut) {
      c->shut = true;
      ::shutdown(c->fd, SHUT_RDWR);
      ++n;
    }
  }
  return n;
}

std::size_t ConnectionTracker::CutOverdue() {
  const std::int64_t now = NowMs();
  const std::int64_t request = limits_.request.count();
  const std::int64_t waiting = limits_.idle.count() + request;
  std::size_t n = 0;
  std::lock_guard<std::mutex> lock(mutex_);
  for (Connection* c : connections_) {
    const std::int64_t age = now - c->since_ms;
    if (!c->shut && age > (c->busy ? request : waiting)) {
      c->shut = true;
      ::shutdown(c->fd, SHUT_RDWR);
      ++n;
    }
  }
  return n;
}

std::size_t ConnectionTracker::open() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return connections_.size();
}

}  // namespace ray_webhook
