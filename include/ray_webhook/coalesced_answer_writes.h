// CoalescedAnswerWrites: each answer leaves a TLS connection in one write(2),
// not one per part.
//
// cpp-httplib 0.11 writes an answer with two SSL_write calls, the status line
// and headers and then the body, so every answer costs two TLS records, two
// write system calls, two TCP segments and two wake-ups of the client.
// Hold(ssl) makes the connection's outgoing TLS records collect in memory;
// Release(ssl) writes what collected in one write and goes back to writing
// straight through. The server calls Hold from cpp-httplib's post-routing
// hook, which runs just before an answer is written, and Release from its
// logger, which runs just after.
//
// Contract: the bytes on the wire are exactly those OpenSSL produced, in the
// same order; only their grouping into writes changes. Held records never
// exceed kHoldLimit bytes: a larger answer is written through as it comes,
// after what was held. Anything OpenSSL flushes itself (handshake messages,
// alerts, close_notify) leaves at once, held records first, so a closing
// connection never strands an answer. A failed write fails the connection's
// later writes, as a failed socket write would. The first Hold on a
// connection puts a filter in front of the connection's socket BIO; reads
// are untouched. Calls for one connection come from the thread serving it;
// different connections need no locking. A null ssl (plain HTTP) is ignored.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>

namespace ray_webhook {

class CoalescedAnswerWrites {
 public:
  static constexpr std::size_t kHoldLimit = 64 * 1024;

  // Returns false if OpenSSL could not set up the filter; writes then go
  // straight through, as without it.
  static bool Hold(const SSL* ssl);
  // Writes what is held. Returns false if that write failed.
  static bool Release(const SSL* ssl);
  // Bytes held for ssl right now (for tests).
  static std::size_t Held(const SSL* ssl);
};

}  // namespace ray_webhook
