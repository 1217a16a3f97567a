// A TLS connection over loopback TCP inside one test: a throw-away self-signed
// certificate, the server's SSL_CTX, and a client that does its side of the
// handshake from a thread. Every socket has 5 s SO_RCVTIMEO and SO_SNDTIMEO,
// as cpp-httplib gives each accepted socket, so a test that goes wrong fails
// instead of hanging.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <thread>

namespace ray_webhook::testing {

inline void SetTimeouts(int fd) {
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  int yes = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
}

class TlsPair {
 public:
  TlsPair() {
    // The server under test writes to peers that may have closed; cpp-httplib's
    // Server ignores SIGPIPE for the same reason.
    signal(SIGPIPE, SIG_IGN);
    EVP_PKEY* key = EVP_EC_gen("P-256");
    X509* cert = X509_new();
    X509_set_version(cert, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert), -60);
    X509_gmtime_adj(X509_getm_notAfter(cert), 3600);
    X509_NAME_add_entry_by_txt(X509_get_subject_name(cert), "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
    X509_set_issuer_name(cert, X509_get_subject_name(cert));
    X509_set_pubkey(cert, key);
    X509_sign(cert, key, EVP_sha256());
    server_ctx_ = SSL_CTX_new(TLS_server_method());
    // No TLS 1.3 session tickets: the only records after the handshake are the tests' own.
    SSL_CTX_set_num_tickets(server_ctx_, 0);
    SSL_CTX_use_certificate(server_ctx_, cert);
    SSL_CTX_use_PrivateKey(server_ctx_, key);
    client_ctx_ = SSL_CTX_new(TLS_client_method());
    X509_free(cert);
    EVP_PKEY_free(key);

    listener_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    EXPECT_EQ(::bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    EXPECT_EQ(::listen(listener_, 4), 0);
    EXPECT_EQ(::getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    server_port_ = ntohs(addr.sin_port);
  }

  ~TlsPair() {
    if (client_thread_.joinable()) client_thread_.join();
    if (client_) SSL_free(client_);
    if (client_fd_ >= 0) ::close(client_fd_);
    if (server_fd_ >= 0 && !server_fd_taken_) ::close(server_fd_);
    ::close(listener_);
    SSL_CTX_free(client_ctx_);
    SSL_CTX_free(server_ctx_);
  }

  // Connects the client; returns the accepted server socket. With
  // handshake, the client starts its TLS handshake in a thread that the
  // first client call joins.
  int Connect(bool handshake = true) {
    client_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(server_port_);
    EXPECT_EQ(::connect(client_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    SetTimeouts(client_fd_);
    server_fd_ = ::accept(listener_, nullptr, nullptr);
    SetTimeouts(server_fd_);
    if (handshake) {
      client_ = SSL_new(client_ctx_);
      SSL_set_fd(client_, client_fd_);
      client_thread_ = std::thread([this] { client_handshake_ok_ = SSL_connect(client_) == 1; });
    }
    return server_fd_;
  }

  // The server side's SSL, handshake done (for tests of the stream alone).
  SSL* AcceptServerSide() {
    SSL* ssl = SSL_new(server_ctx_);
    SSL_set_fd(ssl, server_fd_);
    EXPECT_EQ(SSL_accept(ssl), 1);
    return ssl;
  }

  // The server socket now belongs to the code under test, which closes it.
  void GiveAwayServerSocket() { server_fd_taken_ = true; }

  bool ClientReady() {
    if (client_thread_.joinable()) client_thread_.join();
    return client_handshake_ok_;
  }
  void ClientSend(const std::string& bytes) {
    ASSERT_TRUE(ClientReady());
    ASSERT_EQ(SSL_write(client_, bytes.data(), static_cast<int>(bytes.size())), static_cast<int>(bytes.size()));
  }
  // Reads exactly n plaintext bytes (fewer if the connection ends first).
  std::string ClientReceive(std::size_t n) {
    std::string out;
    if (!ClientReady()) return out;
    char buf[16384];
    while (out.size() < n) {
      const int got = SSL_read(client_, buf, static_cast<int>(std::min(sizeof(buf), n - out.size())));
      if (got <= 0) break;
      out.append(buf, static_cast<std::size_t>(got));
    }
    return out;
  }
  // Bytes waiting in the client's socket, not yet read by OpenSSL.
  std::string ClientPeekRaw() {
    char buf[65536];
    const ssize_t n = ::recv(client_fd_, buf, sizeof(buf), MSG_PEEK | MSG_DONTWAIT);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  }
  bool ClientHasBytesWaiting() {
    pollfd p{client_fd_, POLLIN, 0};
    return ::poll(&p, 1, 0) > 0;
  }

  SSL* client() { return client_; }
  int client_fd() const { return client_fd_; }
  int server_port() const { return server_port_; }
  SSL_CTX* server_ctx() { return server_ctx_; }

 private:
  SSL_CTX* server_ctx_ = nullptr;
  SSL_CTX* client_ctx_ = nullptr;
  int listener_ = -1;
  int server_port_ = 0;
  int client_fd_ = -1;
  int server_fd_ = -1;
  bool server_fd_taken_ = false;
  SSL* client_ = nullptr;
  std::thread client_thread_;
  bool client_handshake_ok_ = false;
};

}  // namespace ray_webhook::testing
