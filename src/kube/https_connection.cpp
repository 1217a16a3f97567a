#include "https_connection.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <functional>
#include <string>

#include "ray_webhook/tls/openssl_error.h"

namespace ray_webhook {
namespace {

using Clock = std::chrono::steady_clock;

bool IsIpLiteral(const std::string& host) {
  in6_addr a6;
  in_addr a4;
  return inet_pton(AF_INET6, host.c_str(), &a6) == 1 || inet_pton(AF_INET, host.c_str(), &a4) == 1;
}

// How often a wait asks its stop predicate.
constexpr long long kStopCheckMs = 200;

// Waits for events on fd until the deadline; false when it passed, or when stop said so.
bool WaitFor(int fd, short events, Clock::time_point deadline, const std::function<bool()>& stop) {
  for (;;) {
    if (stop && stop()) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return false;
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, stop ? kStopCheckMs : 60000)));
    if (n > 0) return true;
    if (n < 0 && errno != EINTR) return false;
  }
}

Result<int> Connect(const HttpsTarget& target, Clock::time_point deadline, const std::function<bool()>& stop) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = ::getaddrinfo(target.host.c_str(), std::to_string(target.port).c_str(), &hints, &found);
  if (rc != 0) return Status::Error(std::string("cannot resolve ") + target.host + ": " + ::gai_strerror(rc));
  int fd = -1;
  std::string error = "cannot connect";
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      int err = errno;
      if (err == EINPROGRESS) {
        if (!WaitFor(fd, POLLOUT, deadline, stop)) {
          err = ETIMEDOUT;
        } else {
          socklen_t len = sizeof err;
          ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
        }
      }
      if (err != 0) {
        error = std::string("cannot connect: ") + std::strerror(err);
        ::close(fd);
        fd = -1;
      }
    }
  }
  ::freeaddrinfo(found);
  if (fd < 0) return Status::Error(error);
  return fd;
}

// Runs one OpenSSL call until it completes, waiting as it asks, until the deadline:
// > 0 done, 0 closed, -1 failed, kTimedOut.
template <typename Call>
int Drive(SSL* ssl, int fd, Clock::time_point deadline, const std::function<bool()>& stop, Call call) {
  for (;;) {
    ERR_clear_error();
    const int r = call();
    if (r > 0) return r;
    const int e = SSL_get_error(ssl, r);
    if (e == SSL_ERROR_WANT_READ) {
      if (!WaitFor(fd, POLLIN, deadline, stop)) return HttpsConnection::kTimedOut;
    } else if (e == SSL_ERROR_WANT_WRITE) {
      if (!WaitFor(fd, POLLOUT, deadline, stop)) return HttpsConnection::kTimedOut;
    } else {
      return e == SSL_ERROR_ZERO_RETURN ? 0 : -1;
    }
  }
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

struct HttpsConnection::Handles {
  int fd = -1;
  SSL_CTX* ctx = nullptr;
  SSL* ssl = nullptr;
  ~Handles() {
    SSL_free(ssl);
    SSL_CTX_free(ctx);
    if (fd >= 0) ::close(fd);
  }
};

HttpsConnection::~HttpsConnection() = default;

Result<std::unique_ptr<HttpsConnection>> HttpsConnection::Open(const HttpsTarget& target, std::string_view method,
                                                               std::string_view path, const HttpHeaders& headers,
                                                               std::string_view body, const std::string& ca_file,
                                                               Clock::time_point deadline,
                                                               const std::function<bool()>& stop) {
  std::unique_ptr<HttpsConnection> c(new HttpsConnection());
  c->handles_ = std::make_unique<Handles>();
  Handles& h = *c->handles_;
  Result<int> fd = Connect(target, deadline, stop);
  if (!fd.ok()) return fd.status();
  h.fd = *fd;
  h.ctx = SSL_CTX_new(TLS_client_method());
  if (h.ctx == nullptr) {
    return Status::Error("cannot create a TLS context");
  }
  SSL_CTX_set_min_proto_version(h.ctx, TLS1_2_VERSION);
  const bool loaded = ca_file.empty() ? SSL_CTX_set_default_verify_paths(h.ctx) == 1
                                      : SSL_CTX_load_verify_locations(h.ctx, ca_file.c_str(), nullptr) == 1;
  if (!loaded) {
    ERR_clear_error();
    return Status::Error("cannot load the CA bundle " + ca_file);
  }
  SSL_CTX_set_verify(h.ctx, SSL_VERIFY_PEER, nullptr);
  h.ssl = SSL_new(h.ctx);
  if (h.ssl == nullptr || SSL_set_fd(h.ssl, h.fd) != 1) {
    return Status::Error("cannot create a TLS connection");
  }
  X509_VERIFY_PARAM* param = SSL_get0_param(h.ssl);
  if (IsIpLiteral(target.host)) {
    X509_VERIFY_PARAM_set1_ip_asc(param, target.host.c_str());
  } else {
    SSL_set_tlsext_host_name(h.ssl, target.host.c_str());
    X509_VERIFY_PARAM_set1_host(param, target.host.c_str(), 0);
  }
  const int shaken = Drive(h.ssl, h.fd, deadline, stop, [&] { return SSL_connect(h.ssl); });
  if (shaken <= 0) {
    const long verify = SSL_get_verify_result(h.ssl);
    return Status::Error(shaken == kTimedOut ? "timed out in the TLS handshake"
                         : verify != X509_V_OK
                             ? std::string("TLS verification failed: ") + X509_verify_cert_error_string(verify)
                             : "TLS handshake failed: " + OpenSslErrorText("connection closed"));
  }

  const bool v6 = target.host.find(':') != std::string::npos;
  std::string request = std::string(method) + " " + std::string(path) +
                        " HTTP/1.1\r\nHost: " + (v6 ? "[" + target.host + "]" : target.host) +
                        (target.port == 443 ? "" : ":" + std::to_string(target.port)) + "\r\n";
  for (const auto& [name, value] : headers) request += name + ": " + value + "\r\n";
  if (method != "GET" || !body.empty()) request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  request += "Connection: close\r\n\r\n";
  request += body;
  const int sent = Drive(h.ssl, h.fd, deadline, stop,
                         [&] { return SSL_write(h.ssl, request.data(), static_cast<int>(request.size())); });
  if (sent <= 0) {
    return Status::Error(sent == kTimedOut ? "timed out sending the request"
                                           : "cannot send the request: " + OpenSslErrorText("connection closed"));
  }
  return c;
}

int HttpsConnection::Read(char* buf, std::size_t size, Clock::time_point until) {
  Handles& h = *handles_;
  const int n = Drive(h.ssl, h.fd, until, {}, [&] { return SSL_read(h.ssl, buf, static_cast<int>(size)); });
  return n == kTimedOut ? kTimedOut : std::max(n, kClosed);
}

std::optional<AnswerHead> ParseAnswerHead(std::string_view head) {
  if (!head.starts_with("HTTP/1.") || head.size() < 12) return std::nullopt;
  AnswerHead answer;
  if (std::from_chars(head.data() + 9, head.data() + 12, answer.status).ec != std::errc()) return std::nullopt;
  std::string_view rest = head.substr(std::min(head.size(), head.find("\r\n") + 2));
  while (!rest.empty()) {
    const std::size_t eol = rest.find("\r\n");
    const std::string_view line = rest.substr(0, eol);
    rest.remove_prefix(eol == std::string_view::npos ? rest.size() : eol + 2);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view name = line.substr(0, colon);
    std::string_view value = line.substr(colon + 1);
    while (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    if (EqualsIgnoreCase(name, "content-length")) {
      std::size_t n = 0;
      if (std::from_chars(value.data(), value.data() + value.size(), n).ec != std::errc()) return std::nullopt;
      answer.content_length = n;
    } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
      answer.chunked = value.find("chunked") != std::string_view::npos;
    }
  }
  return answer;
}

}  // namespace ray_webhook
