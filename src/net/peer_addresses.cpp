#include "ray_webhook/net/peer_addresses.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

namespace ray_webhook {
namespace {

void AddressOf(const sockaddr_storage& addr, std::string* ip, int* port) {
  char host[INET6_ADDRSTRLEN] = "";
  if (addr.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&addr);
    inet_ntop(AF_INET, &a->sin_addr, host, sizeof host);
    *port = ntohs(a->sin_port);
  } else if (addr.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&addr);
    inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof host);
    *port = ntohs(a->sin6_port);
  }
  *ip = host;
}

}  // namespace

PeerAddresses PeerAddressesOf(int fd, const sockaddr_storage& remote) {
  PeerAddresses p;
  AddressOf(remote, &p.remote_ip, &p.remote_port);
  sockaddr_storage addr{};
  socklen_t len = sizeof addr;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) AddressOf(addr, &p.local_ip, &p.local_port);
  return p;
}

}  // namespace ray_webhook
