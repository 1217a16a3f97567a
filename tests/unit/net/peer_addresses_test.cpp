#include "ray_webhook/net/peer_addresses.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <unistd.h>

#include "ray_webhook/net/listening_socket.h"

namespace ray_webhook {
namespace {

TEST(PeerAddresses, BothEndsOfAnAcceptedConnection) {
  Result<int> listening = OpenListeningSocket("127.0.0.1", 0);
  ASSERT_TRUE(listening.ok()) << listening.error();
  sockaddr_in bound{};
  socklen_t len = sizeof bound;
  ASSERT_EQ(::getsockname(*listening, reinterpret_cast<sockaddr*>(&bound), &len), 0);
  const int client = ::socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&bound), sizeof bound), 0);
  sockaddr_storage remote{};
  len = sizeof remote;
  const int accepted = ::accept(*listening, reinterpret_cast<sockaddr*>(&remote), &len);
  ASSERT_GE(accepted, 0);
  sockaddr_in client_end{};
  len = sizeof client_end;
  ASSERT_EQ(::getsockname(client, reinterpret_cast<sockaddr*>(&client_end), &len), 0);

  const PeerAddresses p = PeerAddressesOf(accepted, remote);
  EXPECT_EQ(p.remote_ip, "127.0.0.1");
  EXPECT_EQ(p.remote_port, ntohs(client_end.sin_port));
  EXPECT_EQ(p.local_ip, "127.0.0.1");
  EXPECT_EQ(p.local_port, ntohs(bound.sin_port));
  ::close(accepted);
  ::close(client);
  ::close(*listening);
}

}  // namespace
}  // namespace ray_webhook
