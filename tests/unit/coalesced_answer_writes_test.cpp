#include "ray_webhook/coalesced_answer_writes.h"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <csignal>
#include <string>
#include <thread>

namespace ray_webhook {
namespace {

// A TLS connection over a socketpair: the server end as cpp-httplib sets it up
// (SSL_set_fd, a socket BIO), a client end to read what the server sent.
class TlsPair : public ::testing::Test {
 protected:
  void SetUp() override {
    std::signal(SIGPIPE, SIG_IGN);  // a write to a closed peer must fail, not kill the test
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds_), 0);
    // Reads that would hang because something stayed held fail after 2 s instead.
    timeval limit{2, 0};
    setsockopt(fds_[1], SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit));

    key_ = EVP_EC_gen("P-256");
    ASSERT_NE(key_, nullptr);
    cert_ = X509_new();
    ASN1_INTEGER_set(X509_get_serialNumber(cert_), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert_), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert_), 3600);
    X509_set_pubkey(cert_, key_);
    X509_NAME* name = X509_get_subject_name(cert_);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("test"), -1, -1, 0);
    X509_set_issuer_name(cert_, name);
    ASSERT_GT(X509_sign(cert_, key_, EVP_sha256()), 0);

    server_ctx_ = SSL_CTX_new(TLS_server_method());
    client_ctx_ = SSL_CTX_new(TLS_client_method());
    ASSERT_EQ(SSL_CTX_use_certificate(server_ctx_, cert_), 1);
    ASSERT_EQ(SSL_CTX_use_PrivateKey(server_ctx_, key_), 1);
    server_ = SSL_new(server_ctx_);
    client_ = SSL_new(client_ctx_);
    SSL_set_fd(server_, fds_[0]);
    SSL_set_fd(client_, fds_[1]);
    std::thread connect([this] { client_connected_ = SSL_connect(client_) == 1; });
    const bool accepted = SSL_accept(server_) == 1;
    connect.join();
    ASSERT_TRUE(accepted && client_connected_);
    // TLS 1.3 session tickets follow the handshake: read them off now, so that
    // later checks see only what the test writes.
    Drain();
  }

  void TearDown() override {
    SSL_free(server_);
    SSL_free(client_);
    SSL_CTX_free(server_ctx_);
    SSL_CTX_free(client_ctx_);
    X509_free(cert_);
    EVP_PKEY_free(key_);
    if (fds_[0] >= 0) close(fds_[0]);
    if (fds_[1] >= 0) close(fds_[1]);
  }

  // Bytes that reached the client's socket and are not read yet.
  int Arrived() const {
    int n = 0;
    ioctl(fds_[1], FIONREAD, &n);
    return n;
  }

  // Reads and decrypts exactly n bytes of application data on the client.
  std::string ClientRead(std::size_t n) {
    std::string out(n, '\0');
    std::size_t got = 0;
    while (got < n) {
      const int r = SSL_read(client_, out.data() + got, static_cast<int>(n - got));
      if (r <= 0) break;
      got += static_cast<std::size_t>(r);
    }
    out.resize(got);
    return out;
  }

  // Reads what arrived without waiting for more: OpenSSL processes the tickets.
  void Drain() {
    const int flags = fcntl(fds_[1], F_GETFL);
    fcntl(fds_[1], F_SETFL, flags | O_NONBLOCK);
    char buf[256];
    while (Arrived() > 0 && SSL_peek(client_, buf, sizeof(buf)) <= 0 &&
           SSL_get_error(client_, 0) == SSL_ERROR_WANT_READ) {
    }
    fcntl(fds_[1], F_SETFL, flags);
  }

  bool Write(const std::string& s) {
    return SSL_write(server_, s.data(), static_cast<int>(s.size())) == static_cast<int>(s.size());
  }

  int fds_[2] = {-1, -1};
  EVP_PKEY* key_ = nullptr;
  X509* cert_ = nullptr;
  SSL_CTX* server_ctx_ = nullptr;
  SSL_CTX* client_ctx_ = nullptr;
  SSL* server_ = nullptr;
  SSL* client_ = nullptr;
  bool client_connected_ = false;
};

const std::string kHeaders = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n";
const std::string kBody = R"({"ok": true}
)";

TEST_F(TlsPair, WithoutHoldEachRecordLeavesAtOnce) {
  ASSERT_TRUE(Write(kHeaders));
  EXPECT_GT(Arrived(), static_cast<int>(kHeaders.size()));
  EXPECT_EQ(ClientRead(kHeaders.size()), kHeaders);
}

TEST_F(TlsPair, AHeldAnswerLeavesWholeOnRelease) {
  ASSERT_TRUE(CoalescedAnswerWrites::Hold(server_));
  ASSERT_TRUE(Write(kHeaders));
  ASSERT_TRUE(Write(kBody));
  // Two TLS records, each with its header and tag, and nothing sent yet.
  const std::size_t held = CoalescedAnswerWrites::Held(server_);
  EXPECT_GT(held, kHeaders.size() + kBody.size());
  EXPECT_EQ(Arrived(), 0);

  ASSERT_TRUE(CoalescedAnswerWrites::Release(server_));
  EXPECT_EQ(CoalescedAnswerWrites::Held(server_), 0u);
  EXPECT_EQ(Arrived(), static_cast<int>(held));  // both records, in one go
  EXPECT_EQ(ClientRead(kHeaders.size() + kBody.size()), kHeaders + kBody);
}

TEST_F(TlsPair, AfterReleaseWritesGoStraightThroughAgain) {
  for (int answer = 0; answer < 3; ++answer) {
    ASSERT_TRUE(CoalescedAnswerWrites::Hold(server_));
    ASSERT_TRUE(Write(kBody));
    EXPECT_EQ(Arrived(), 0);
    ASSERT_TRUE(CoalescedAnswerWrites::Release(server_));
    EXPECT_EQ(ClientRead(kBody.size()), kBody);
  }
  ASSERT_TRUE(Write(kHeaders));
  EXPECT_GT(Arrived(), 0);
  EXPECT_EQ(ClientRead(kHeaders.size()), kHeaders);
}

TEST_F(TlsPair, ReleaseWithoutHoldIsHarmless) {
  EXPECT_TRUE(CoalescedAnswerWrites::Release(server_));
  EXPECT_EQ(CoalescedAnswerWrites::Held(server_), 0u);
  ASSERT_TRUE(Write(kBody));
  EXPECT_EQ(ClientRead(kBody.size()), kBody);
}

TEST_F(TlsPair, AnAnswerAboveTheLimitIsWrittenThroughInOrder) {
  std::string big(3 * CoalescedAnswerWrites::kHoldLimit, '\0');
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<char>('a' + i % 26);
  std::string received;
  // The socket buffer is smaller than the answer: the client reads as it comes.
  std::thread reader([&] { received = ClientRead(kHeaders.size() + big.size()); });
  ASSERT_TRUE(CoalescedAnswerWrites::Hold(server_));
  ASSERT_TRUE(Write(kHeaders));
  ASSERT_TRUE(Write(big));
  EXPECT_LE(CoalescedAnswerWrites::Held(server_), CoalescedAnswerWrites::kHoldLimit);
  ASSERT_TRUE(CoalescedAnswerWrites::Release(server_));
  reader.join();
  EXPECT_TRUE(received == kHeaders + big) << "received " << received.size() << " bytes";
}

TEST_F(TlsPair, ClosingTheConnectionSendsWhatIsHeldFirst) {
  ASSERT_TRUE(CoalescedAnswerWrites::Hold(server_));
  ASSERT_TRUE(Write(kBody));
  // close_notify is an alert, which OpenSSL flushes: the held answer goes before it.
  SSL_shutdown(server_);
  EXPECT_EQ(CoalescedAnswerWrites::Held(server_), 0u);
  EXPECT_EQ(ClientRead(kBody.size()), kBody);
  char byte;
  EXPECT_EQ(SSL_read(client_, &byte, 1), 0);
  EXPECT_EQ(SSL_get_error(client_, 0), SSL_ERROR_ZERO_RETURN);
}

TEST_F(TlsPair, AFailedReleaseFailsTheConnectionsLaterWrites) {
  ASSERT_TRUE(CoalescedAnswerWrites::Hold(server_));
  ASSERT_TRUE(Write(kBody));
  close(fds_[1]);
  fds_[1] = -1;
  EXPECT_FALSE(CoalescedAnswerWrites::Release(server_));
  EXPECT_EQ(CoalescedAnswerWrites::Held(server_), 0u);
  EXPECT_LE(SSL_write(server_, kBody.data(), static_cast<int>(kBody.size())), 0);
}

TEST(CoalescedAnswerWrites, PlainConnectionsAreIgnored) {
  EXPECT_FALSE(CoalescedAnswerWrites::Hold(nullptr));
  EXPECT_TRUE(CoalescedAnswerWrites::Release(nullptr));
  EXPECT_EQ(CoalescedAnswerWrites::Held(nullptr), 0u);
}

}  // namespace
}  // namespace ray_webhook
