// ceiling_server: the transport ceiling for bench/load.sh. A bare cpp-httplib TLS
// server that answers every POST /mutate with one fixed JSON body and does
// nothing else: no parsing, no logging. Whatever ray-webhook does per request
// beyond this is the cost of the review itself, its logging and its routing.
//
//   ceiling_server --tls-cert FILE --tls-key FILE [--bind ADDR] [--port N]
//                  [--threads N] [--body FILE]
//
// It is set up as ray-webhook sets up its server, so the comparison is fair:
// TLS 1.2 or newer, TCP_NODELAY, a keep-alive connection serving up to 100,000
// requests, a pool of --threads threads (default 64; one per kept-alive
// connection), SO_REUSEADDR only (not cpp-httplib's default SO_REUSEPORT), and a
// listen backlog raised from cpp-httplib's 5 to SOMAXCONN. The request body is
// read (cpp-httplib always does) and limited to 7 MiB like ray-webhook's.
// --body FILE is the answer (default: a small allowed AdmissionReview); load.sh
// passes ray-webhook's own answer to the fixture, so both send the same bytes.
// Stops on SIGTERM or SIGINT.
#include <httplib.h>
#include <openssl/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

namespace {

constexpr char kDefaultBody[] = R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":)"
                                R"({"uid":"00000000-0000-0000-0000-000000000000","allowed":true}})";

// cpp-httplib 0.11 keeps the listening socket protected; reach it to raise the backlog.
class CeilingServer : public httplib::SSLServer {
 public:
  using httplib::SSLServer::SSLServer;
  bool RaiseListenBacklog() {
    const socket_t sock = svr_sock_;
    return sock != INVALID_SOCKET && ::listen(sock, SOMAXCONN) == 0;
  }
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "ceiling_server: %s\n"
               "usage: ceiling_server --tls-cert FILE --tls-key FILE [--bind ADDR] [--port N] [--threads N] "
               "[--body FILE]\n",
               why);
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  std::string bind = "127.0.0.1", cert, key, body_file;
  int port = 8444, threads = 64;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Usage(("missing value for " + flag).c_str());
    const char* value = argv[++i];
    if (flag == "--bind")
      bind = value;
    else if (flag == "--port")
      port = std::atoi(value);
    else if (flag == "--threads")
      threads = std::atoi(value);
    else if (flag == "--tls-cert")
      cert = value;
    else if (flag == "--tls-key")
      key = value;
    else if (flag == "--body")
      body_file = value;
    else
      Usage(("unknown flag " + flag).c_str());
  }
  if (cert.empty() || key.empty()) Usage("--tls-cert and --tls-key are required");
  if (port <= 0 || port > 65535 || threads <= 0) Usage("bad --port or --threads");

  std::string body = kDefaultBody;
  if (!body_file.empty()) {
    std::ifstream in(body_file, std::ios::binary);
    if (!in) Usage(("cannot read " + body_file).c_str());
    body.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

  // Signals go to one thread that calls stop(), as in ray-webhook.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  CeilingServer server(cert.c_str(), key.c_str());
  if (!server.is_valid()) {
    std::fprintf(stderr, "ceiling_server: cannot load %s / %s\n", cert.c_str(), key.c_str());
    return 1;
  }
  SSL_CTX_set_min_proto_version(server.ssl_context(), TLS1_2_VERSION);
  server.set_tcp_nodelay(true);
  server.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  server.set_keep_alive_max_count(100000);
  server.set_payload_max_length(7 * 1024 * 1024);
  server.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  server.Post("/mutate",
              [&body](const httplib::Request&, httplib::Response& res) { res.set_content(body, "application/json"); });

  if (!server.bind_to_port(bind, port)) {
    std::fprintf(stderr, "ceiling_server: cannot listen on %s:%d\n", bind.c_str(), port);
    return 1;
  }
  if (!server.RaiseListenBacklog()) std::fprintf(stderr, "ceiling_server: could not raise the listen backlog\n");

  std::thread stopper([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    server.stop();
  });
  std::fprintf(stderr, "ceiling_server: serving on https://%s:%d threads=%d body=%zu bytes\n", bind.c_str(), port,
               threads, body.size());
  const bool ok = server.listen_after_bind();
  if (!ok) pthread_kill(stopper.native_handle(), SIGTERM);
  stopper.join();
  return ok ? 0 : 1;
}
