#include "ray_webhook/tls_stream.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>

namespace ray_webhook {
namespace {

bool Poll(socket_t sock, short events, std::chrono::microseconds timeout) {
  pollfd p{sock, events, 0};
  const auto ms = static_cast<int>(std::min<std::int64_t>(timeout.count() / 1000, INT_MAX));
  int n;
  do {
    n = ::poll(&p, 1, ms);
  } while (n < 0 && errno == EINTR);
  return n > 0;
}

// As cpp-httplib 0.11 reports addresses: numeric host, port in host order.
void AddressOf(socket_t sock, bool remote, std::string& ip, int& port) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  const int got = remote ? ::getpeername(sock, reinterpret_cast<sockaddr*>(&addr), &len)
                         : ::getsockname(sock, reinterpret_cast<sockaddr*>(&addr), &len);
  ip.clear();
  port = 0;
  if (got != 0) return;
  if (addr.ss_family == AF_INET) {
    port = ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    port = ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
  } else {
    return;
  }
  char host[NI_MAXHOST];
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&addr), len, host, sizeof(host), nullptr, 0, NI_NUMERICHOST) == 0) {
    ip = host;
  }
}

void Learn(socket_t sock, SocketAddresses* a) {
  if (a->known) return;
  AddressOf(sock, true, a->remote_ip, a->remote_port);
  AddressOf(sock, false, a->local_ip, a->local_port);
  a->known = true;
}

}  // namespace

TlsStream::TlsStream(SSL* ssl, socket_t sock, SocketAddresses* addresses, std::chrono::microseconds read_timeout,
                     std::chrono::microseconds write_timeout)
    : ssl_(ssl), sock_(sock), addresses_(addresses), read_timeout_(read_timeout), write_timeout_(write_timeout) {}

bool TlsStream::HasBufferedInput() const { return in_begin_ < in_end_ || SSL_has_pending(ssl_) == 1; }

bool TlsStream::is_readable() const {
  return HasBufferedInput() || Poll(sock_, POLLIN, read_timeout_);
}

bool TlsStream::is_writable() const { return Poll(sock_, POLLOUT, write_timeout_); }

ssize_t TlsStream::ReadTls(char* ptr, size_t size) {
  const int n = SSL_read(ssl_, ptr, static_cast<int>(std::min<size_t>(size, INT_MAX)));
  if (n > 0) return n;
  const int error = SSL_get_error(ssl_, n);
  return error == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}

ssize_t TlsStream::read(char* ptr, size_t size) {
  if (size == 0) return 0;
  if (in_begin_ == in_end_) {
    // Whatever the peer waits for (a 100 Continue, say) must leave before
    // this waits for the peer; bytes OpenSSL has already decrypted need no wait.
    if (SSL_pending(ssl_) == 0 && !Flush()) return -1;
    if (size >= kReadBuffer) return ReadTls(ptr, size);
    const ssize_t n = ReadTls(in_.data(), in_.size());
    if (n <= 0) return n;
    in_begin_ = 0;
    in_end_ = static_cast<std::size_t>(n);
  }
  const std::size_t n = std::min(size, in_end_ - in_begin_);
  std::memcpy(ptr, in_.data() + in_begin_, n);
  in_begin_ += n;
  return static_cast<ssize_t>(n);
}

bool TlsStream::WriteTls(const char* ptr, size_t size) {
  // Blocking, and without SSL_MODE_ENABLE_PARTIAL_WRITE: SSL_write writes all or fails.
  while (size > 0 && !write_failed_) {
    const int chunk = static_cast<int>(std::min<size_t>(size, INT_MAX));
    if (SSL_write(ssl_, ptr, chunk) != chunk) {
      write_failed_ = true;
    } else {
      ptr += chunk;
      size -= static_cast<size_t>(chunk);
    }
  }
  return !write_failed_;
}

bool TlsStream::Flush() {
  if (out_size_ == 0) return !write_failed_;
  const bool ok = WriteTls(out_.data(), out_size_);
  out_size_ = 0;
  return ok;
}

ssize_t TlsStream::write(const char* ptr, size_t size) {
  if (write_failed_) return -1;
  if (out_size_ + size > out_.size()) {
    if (!Flush()) return -1;
    if (size > out_.size()) return WriteTls(ptr, size) ? static_cast<ssize_t>(size) : -1;
  }
  std::memcpy(out_.data() + out_size_, ptr, size);
  out_size_ += size;
  return static_cast<ssize_t>(size);
}

void TlsStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  Learn(sock_, addresses_);
  ip = addresses_->remote_ip;
  port = addresses_->remote_port;
}

void TlsStream::get_local_ip_and_port(std::string& ip, int& port) const {
  Learn(sock_, addresses_);
  ip = addresses_->local_ip;
  port = addresses_->local_port;
}

}  // namespace ray_webhook
