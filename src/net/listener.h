// Listener: one listening socket of a ConnectionLoop, as its event loops see it.
//
// Contract: every event loop watches every listener (EPOLLEXCLUSIVE: one loop
// is woken per new connection). A connection accepted on it speaks TLS when
// ctx is set, plain TCP otherwise, and is served by a session from its
// factory. The ConnectionLoop owns the listener and closes fd when it stops;
// fd, ctx and sessions never change.
#pragma once

#include <openssl/ssl.h>

#include "pollable.h"
#include "ray_webhook/net/session.h"

namespace ray_webhook {

struct Listener : Pollable {
  Listener(int f, SSL_CTX* c, SessionFactory& s) : Pollable{true}, fd(f), ctx(c), sessions(s) {}
  const int fd;
  SSL_CTX* const ctx;
  SessionFactory& sessions;
};

}  // namespace ray_webhook
