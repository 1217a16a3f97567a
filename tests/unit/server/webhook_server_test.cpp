#include "ray_webhook/server/webhook_server.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

using testing::ReadFixture;

// A throw-away self-signed pair, as the PEM files the server reads.
void WriteServingPair(const std::string& cert_file, const std::string& key_file) {
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
  FILE* c = std::fopen(cert_file.c_str(), "w");
  PEM_write_X509(c, cert);
  std::fclose(c);
  FILE* k = std::fopen(key_file.c_str(), "w");
  PEM_write_PrivateKey(k, key, nullptr, nullptr, 0, nullptr, nullptr);
  std::fclose(k);
  X509_free(cert);
  EVP_PKEY_free(key);
}

// A port nothing listens on right now.
int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// One HTTPS request on a fresh connection (Connection: close), read to the end; empty when it failed.
std::string Exchange(int port, const std::string& request) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_client_method());
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  std::string answer;
  SSL* ssl = nullptr;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    ssl = SSL_new(ctx);
    SSL_set_fd(ssl, fd);
    if (SSL_connect(ssl) == 1 && SSL_write(ssl, request.data(), static_cast<int>(request.size())) > 0) {
      char buf[16384];
      for (int n; (n = SSL_read(ssl, buf, sizeof buf)) > 0;) answer.append(buf, static_cast<std::size_t>(n));
    }
  }
  SSL_free(ssl);
  ::close(fd);
  SSL_CTX_free(ctx);
  return answer;
}

std::string Post(const std::string& path, const std::string& body) {
  return "POST " + path + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n" +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string BodyOf(const std::string& answer) { return answer.substr(answer.find("\r\n\r\n") + 4); }

class WebhookServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / ("webhook-server-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    config_.tls.cert_file = (dir_ / "tls.crt").string();
    config_.tls.key_file = (dir_ / "tls.key").string();
    WriteServingPair(config_.tls.cert_file, config_.tls.key_file);
    config_.bind_address = "127.0.0.1";
    config_.port = FreePort();
    config_.probe_port = 0;
    config_.drain_delay = std::chrono::milliseconds(0);
    config_.shutdown_grace = std::chrono::milliseconds(2000);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  ServerConfig config_;
};

TEST_F(WebhookServerTest, ServesReviewsProbesAndRefusalsThenShutsDown) {
  WebhookServer server(config_);
  const Status bound = server.Bind();
  ASSERT_TRUE(bound.ok()) << bound.message();
  std::thread serving([&] { server.Serve(); });

  const std::string review = ReadFixture("reviews/kuberay-0.4-worker.json");
  const std::string mutated = Exchange(config_.port, Post("/mutate", review));
  ASSERT_TRUE(mutated.starts_with("HTTP/1.1 200 OK\r\n")) << mutated.substr(0, 200);
  EXPECT_NE(mutated.find("\r\nConnection: close\r\n"), std::string::npos);
  const auto j = nlohmann::json::parse(BodyOf(mutated));
  EXPECT_EQ(j["kind"], "AdmissionReview");
  EXPECT_EQ(j["response"]["uid"], nlohmann::json::parse(review)["request"]["uid"]);
  EXPECT_EQ(j["response"]["patchType"], "JSONPatch");

  const std::string bad = Exchange(config_.port, Post("/validate", "not json"));
  EXPECT_TRUE(bad.starts_with("HTTP/1.1 400 Bad Request\r\n")) << bad.substr(0, 200);
  EXPECT_EQ(nlohmann::json::parse(BodyOf(bad))["kind"], "Status");

  const std::string health = Exchange(config_.port, "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(health.starts_with("HTTP/1.1 200 OK\r\n")) << health;
  EXPECT_EQ(BodyOf(health), "ok\n");

  const std::string missing = Exchange(config_.port, "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(missing.starts_with("HTTP/1.1 404 Not Found\r\n")) << missing;
  EXPECT_EQ(nlohmann::json::parse(BodyOf(missing))["code"], 404);

  const std::string wrong = Exchange(config_.port, "GET /mutate HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_TRUE(wrong.starts_with("HTTP/1.1 405 ")) << wrong;
  EXPECT_NE(wrong.find("\r\nAllow: POST\r\n"), std::string::npos) << wrong;

  const std::string metrics = Exchange(config_.port, "GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(metrics.find("controller_runtime_webhook_requests_total{code=\"200\",webhook=\"/mutate\"} 1"),
            std::string::npos)
      << BodyOf(metrics).substr(0, 400);

  EXPECT_TRUE(server.Shutdown()) << "every connection closed within the grace";
  serving.join();
  EXPECT_TRUE(Exchange(config_.port, "GET /healthz HTTP/1.1\r\n\r\n").empty()) << "no longer serving";
}

TEST_F(WebhookServerTest, BindSaysWhichCertificateItCannotLoad) {
  config_.tls.cert_file = (dir_ / "missing.crt").string();
  WebhookServer server(config_);
  const Status bound = server.Bind();
  ASSERT_FALSE(bound.ok());
  EXPECT_NE(bound.message().find("missing.crt"), std::string::npos) << bound.message();
}

}  // namespace
}  // namespace ray_webhook
