#include "ray_webhook/net/transport.h"

#include <openssl/err.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace ray_webhook {
namespace {

// OpenSSL takes int lengths.
constexpr std::size_t kMaxIo = 1 << 30;

class PlainTransport final : public Transport {
 public:
  explicit PlainTransport(int fd) : fd_(fd) {}
  ~PlainTransport() override { ::close(fd_); }

  Io Handshake() override { return Io::kDone; }

  Io Read(char* at, std::size_t room, std::size_t* got) override {
    for (;;) {
      const ssize_t r = ::recv(fd_, at, room, 0);
      if (r > 0) {
        *got = static_cast<std::size_t>(r);
        return Io::kDone;
      }
      if (r == 0) return Io::kEof;
      if (errno == EINTR) continue;
      return errno == EAGAIN || errno == EWOULDBLOCK ? Io::kWantRead : Io::kError;
    }
  }

  Io Write(const char* at, std::size_t size, std::size_t* sent) override {
    for (;;) {
      const ssize_t r = ::send(fd_, at, size, MSG_NOSIGNAL);
      if (r > 0) {
        *sent = static_cast<std::size_t>(r);
        return Io::kDone;
      }
      if (r < 0 && errno == EINTR) continue;
      return r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) ? Io::kWantWrite : Io::kError;
    }
  }

  bool Buffered() const override { return false; }
  void Shutdown() override { ::shutdown(fd_, SHUT_WR); }
  int fd() const override { return fd_; }

 private:
  const int fd_;
};

class TlsTransport final : public Transport {
 public:
  TlsTransport(int fd, SSL* ssl) : fd_(fd), ssl_(ssl) {}
  ~TlsTransport() override {
    SSL_free(ssl_);
    ::close(fd_);
  }

  Io Handshake() override {
    ERR_clear_error();
    const int r = SSL_do_handshake(ssl_);
    if (r == 1) return Io::kDone;
    switch (SSL_get_error(ssl_, r)) {
      case SSL_ERROR_WANT_READ: return Io::kWantRead;
      case SSL_ERROR_WANT_WRITE: return Io::kWantWrite;
      default: return Io::kError;
    }
  }

  Io Read(char* at, std::size_t room, std::size_t* got) override {
    ERR_clear_error();
    const int r = SSL_read(ssl_, at, static_cast<int>(std::min(room, kMaxIo)));
    if (r > 0) {
      *got = static_cast<std::size_t>(r);
      return Io::kDone;
    }
    switch (SSL_get_error(ssl_, r)) {
      case SSL_ERROR_WANT_READ: return Io::kWantRead;
      case SSL_ERROR_WANT_WRITE: return Io::kWantWrite;
      case SSL_ERROR_ZERO_RETURN: return Io::kEof;
      default: return Io::kError;
    }
  }

  Io Write(const char* at, std::size_t size, std::size_t* sent) override {
    ERR_clear_error();
    const int r = SSL_write(ssl_, at, static_cast<int>(std::min(size, kMaxIo)));
    if (r > 0) {
      *sent = static_cast<std::size_t>(r);
      return Io::kDone;
    }
    switch (SSL_get_error(ssl_, r)) {
      case SSL_ERROR_WANT_WRITE: return Io::kWantWrite;
      case SSL_ERROR_WANT_READ: return Io::kWantRead;
      default: return Io::kError;
    }
  }

  bool Buffered() const override { return SSL_has_pending(ssl_) == 1; }

  void Shutdown() override {
    if (SSL_is_init_finished(ssl_)) {
      ERR_clear_error();
      SSL_shutdown(ssl_);
    }
    ::shutdown(fd_, SHUT_WR);
  }

  int fd() const override { return fd_; }

 private:
  const int fd_;
  SSL* const ssl_;
};

}  // namespace

std::unique_ptr<Transport> MakePlainTransport(int fd) { return std::make_unique<PlainTransport>(fd); }

std::unique_ptr<Transport> MakeTlsTransport(int fd, SSL_CTX* ctx) {
  SSL* ssl = SSL_new(ctx);
  if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1) {
    SSL_free(ssl);
    ::close(fd);
    return nullptr;
  }
  SSL_set_accept_state(ssl);
  return std::make_unique<TlsTransport>(fd, ssl);
}

}  // namespace ray_webhook
