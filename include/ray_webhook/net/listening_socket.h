// OpenListeningSocket: the TCP socket a port is served from.
//
// Contract: binds address (an IPv4 or IPv6 literal, or a name resolved once)
// and port with SO_REUSEADDR but never SO_REUSEPORT, so a second server on a
// busy port fails instead of silently taking half its connections, and
// listens with a backlog of SOMAXCONN (cpp-httplib 0.11 listens with 5, and
// a burst of connections beyond it waits a second for SYN retries). Returns
// the descriptor, or an error saying why.
#pragma once

#include <string>

#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

Result<int> OpenListeningSocket(const std::string& address, int port);

}  // namespace ray_webhook
