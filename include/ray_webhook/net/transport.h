// Transport: the bytes of one accepted connection, over TLS or plain TCP,
// without ever blocking.
//
// Contract: every call returns at once. Handshake() advances a TLS handshake
// as far as the bytes that have arrived allow (a plain transport is
// established from the start); Read and Write move what the socket (and
// OpenSSL) take now and say what they wait for otherwise, so the event loop
// knows which readiness to wait on: TLS may need to write to read and read
// to write. Buffered() says whether bytes were read from the socket that the
// caller has not seen yet (OpenSSL's record buffer), so an idle-looking
// connection is not closed under a request. Shutdown() starts a graceful
// close: close_notify for an established TLS session, then FIN. The
// transport owns the descriptor and closes it when destroyed.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <memory>

namespace ray_webhook {

enum class Io { kDone, kWantRead, kWantWrite, kEof, kError };

class Transport {
 public:
  virtual ~Transport() = default;
  virtual Io Handshake() = 0;
  // kDone with *got > 0 bytes read into at.
  virtual Io Read(char* at, std::size_t room, std::size_t* got) = 0;
  // kDone with *sent > 0 bytes of at written.
  virtual Io Write(const char* at, std::size_t size, std::size_t* sent) = 0;
  virtual bool Buffered() const = 0;
  virtual void Shutdown() = 0;
  virtual int fd() const = 0;
};

// Takes fd; null (fd closed) when OpenSSL cannot set up the session.
std::unique_ptr<Transport> MakePlainTransport(int fd);
std::unique_ptr<Transport> MakeTlsTransport(int fd, SSL_CTX* ctx);

}  // namespace ray_webhook
