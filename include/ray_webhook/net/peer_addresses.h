// PeerAddresses: a connection's two ends, learnt once when it is accepted.
//
// Contract: plain data; numeric host and port in host order, as logs and
// handlers show them. PeerAddressesOf takes the remote end as accept()
// reported it and asks the socket for its local end; a field the kernel
// does not report stays empty (0).
#pragma once

#include <sys/socket.h>

#include <string>

namespace ray_webhook {

struct PeerAddresses {
  std::string remote_ip, local_ip;
  int remote_port = 0, local_port = 0;
};

PeerAddresses PeerAddressesOf(int fd, const sockaddr_storage& remote);

}  // namespace ray_webhook
