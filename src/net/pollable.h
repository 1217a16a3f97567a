// Pollable: what an epoll event of an event loop points at.
//
// Contract: a Listener or a Connection, told apart by `listener` without a
// virtual call; a null pointer is the loop's wake descriptor. Listener and
// Connection derive from it so that either can stand in epoll_event.data.
#pragma once

namespace ray_webhook {

struct Pollable {
  bool listener;
};

}  // namespace ray_webhook
