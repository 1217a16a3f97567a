// TlsStream: cpp-httplib's Stream over one TLS connection, reading through a
// buffer and writing an answer as one TLS record.
//
// cpp-httplib 0.11 reads a request's line and headers one byte per
// Stream::read. Its own SSL stream makes each of those bytes an SSL_read,
// polls the socket before every read and every write, asks the kernel for
// both socket addresses on every request, and writes the status line and
// headers and then the body as two records in two write(2)s. This stream
// serves small reads from a buffer that one SSL_read fills, learns the
// addresses once per connection, and holds what is written until the
// connection has to wait for its peer or Flush() is called. A stream lives
// while one thread serves the connection; ConnectionLoop puts a connection
// back to wait only when its stream holds nothing unread.
//
// Contract: takes an SSL whose handshake is done, on a blocking socket whose
// SO_RCVTIMEO and SO_SNDTIMEO bound every wait (cpp-httplib sets both on each
// socket it accepts); never owns, shuts down or frees either. read() returns
// the connection's plaintext exactly, in order: a positive count, 0 at the
// peer's close, -1 on a TLS or socket error. Written bytes leave in the order
// written, at the latest before a read that has to wait for the peer, on
// Flush(), or as soon as more than kWriteHold bytes are held. After a failed
// write every later write and Flush() fails. One thread at a time.
#pragma once

#include <httplib.h>
#include <openssl/ssl.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <string>

namespace ray_webhook {

// A connection's two addresses, looked up on first use and kept with the
// connection, which outlives any one TlsStream over it.
struct SocketAddresses {
  bool known = false;
  std::string remote_ip, local_ip;
  int remote_port = 0, local_port = 0;
};

class TlsStream final : public httplib::Stream {
 public:
  // A request line with its headers, and the body cpp-httplib reads in
  // 4 KiB pieces, fit; longer reads go to OpenSSL directly.
  static constexpr std::size_t kReadBuffer = 4096;
  // TLS's largest record (RFC 8446, section 5.1): one answer of up to this
  // size leaves as one record.
  static constexpr std::size_t kWriteHold = 16384;

  // addresses: the connection's, filled in on the first request that asks.
  TlsStream(SSL* ssl, socket_t sock, SocketAddresses* addresses, std::chrono::microseconds read_timeout,
            std::chrono::microseconds write_timeout);
  TlsStream(const TlsStream&) = delete;
  TlsStream& operator=(const TlsStream&) = delete;

  bool is_readable() const override;
  bool is_writable() const override;
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override;
  void get_remote_ip_and_port(std::string& ip, int& port) const override;
  void get_local_ip_and_port(std::string& ip, int& port) const override;
  socket_t socket() const override { return sock_; }

  // Writes what is held. Returns false if the write failed, now or before.
  bool Flush();
  // Bytes already taken from the socket and not yet handed out: plaintext in
  // this stream's buffer, or record bytes OpenSSL holds. The socket will not
  // become readable again for them, so the connection must not wait on it.
  bool HasBufferedInput() const;
  SSL* ssl() const { return ssl_; }

 private:
  ssize_t ReadTls(char* ptr, size_t size);
  bool WriteTls(const char* ptr, size_t size);

  SSL* const ssl_;
  const socket_t sock_;
  SocketAddresses* const addresses_;
  const std::chrono::microseconds read_timeout_, write_timeout_;
  std::array<char, kReadBuffer> in_;
  std::size_t in_begin_ = 0, in_end_ = 0;
  std::array<char, kWriteHold> out_;
  std::size_t out_size_ = 0;
  bool write_failed_ = false;
};

}  // namespace ray_webhook
