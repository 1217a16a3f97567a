// ConnectionTracker: what each TLS connection of the server is doing, seen
// from OpenSSL, so connections can be cut without cpp-httplib's help.
//
// Contract: Install() hooks an SSL_CTX: a connection is registered when its
// handshake starts and forgotten when OpenSSL frees it (before cpp-httplib
// closes the socket, so a descriptor is never used after it is reused).
// RequestStarted/RequestFinished mark the request in flight; the caller
// invokes them from the routing hook and the logger, which cpp-httplib calls
// after the answer is written. CloseIdle() shuts down the sockets of
// connections between requests (graceful shutdown). CutOverdue() shuts down
// connections whose request, or whose wait for one, outlived its limit: a
// client trickling a byte a second never trips cpp-httplib's per-read
// timeout, so only a deadline per request stops it. Thread-safe.
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <mutex>
#include <unordered_set>

namespace ray_webhook {

class ConnectionTracker {
 public:
  struct Limits {
    // Between requests: cpp-httplib's keep-alive wait closes the connection
    // itself; the deadline backs it up.
    std::chrono::milliseconds idle;
    // From the last answer (or the handshake) until the next request is read
    // and answered.
    std::chrono::milliseconds request;
  };

  explicit ConnectionTracker(Limits limits);
  ~ConnectionTracker();
  ConnectionTracker(const ConnectionTracker&) = delete;
  ConnectionTracker& operator=(const ConnectionTracker&) = delete;

  // Hooks ctx; at most one tracker per SSL_CTX. Returns false if OpenSSL refuses.
  bool Install(SSL_CTX* ctx);

  void RequestStarted(const SSL* ssl);
  void RequestFinished(const SSL* ssl);

  // Returns how many connections were shut down.
  std::size_t CloseIdle();
  std::size_t CutOverdue();

  std::size_t open() const;

 private:
  struct Connection;
  static void OnInfo(const SSL* ssl, int where, int ret);
  static void OnFree(void* parent, void* ptr, CRYPTO_EX_DATA* ad, int idx, long argl, void* argp);
  Connection* Find(const SSL* ssl) const;

  const Limits limits_;
  int ssl_index_ = -1;
  mutable std::mutex mutex_;
  std::unordered_set<Connection*> connections_;
};

}  // namespace ray_webhook
