#include "ray_webhook/webhook_server.h"

#include <httplib.h>
#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "ray_webhook/admission_response.h"
#include "ray_webhook/admission_text.h"
#include "ray_webhook/connection_loop.h"
#include "ray_webhook/kube_api_client.h"
#include "ray_webhook/metrics.h"
#include "ray_webhook/review_decoder_pool.h"
#include "ray_webhook/review_handler.h"
#include "ray_webhook/review_log_line.h"
#include "ray_webhook/serving_certificate.h"
#include "ray_webhook/tls_policy.h"
#include "ray_webhook/usable_cpus.h"

namespace ray_webhook {
namespace {

using Clock = std::chrono::steady_clock;
// A decoder grown by a large review keeps its size while large reviews keep
// coming (regrowing costs page faults on every one), and gives it back within
// two of these once they stop (ReviewDecoderPool::ShrinkIdle).
constexpr auto kDecoderShrinkInterval = std::chrono::seconds(5);

// A user-supplied value in a warn or error line, written as AppendLogValue
// writes it.
struct LogValue {
  std::string_view value;
};

// What Response::set_content does, without its copy: cpp-httplib 0.11 takes
// the body by const reference and copies it, and an answer of more than 1 KiB
// is an allocation that glibc serves from its bins, not its per-thread cache.
void SetJsonBody(httplib::Response& res, std::string&& body) {
  // Built once: "application/json" is one byte too long for a temporary
  // string made from the literal on every answer to skip the heap.
  static const std::string kJsonType = "application/json";
  res.body = std::move(body);
  const auto [first, last] = res.headers.equal_range("Content-Type");
  res.headers.erase(first, last);
  res.set_header("Content-Type", kJsonType);
}

void SetError(httplib::Response& res, int status, std::string_view reason, std::string_view message) {
  res.status = status;
  SetJsonBody(res, EncodeErrorStatus(status, reason, message));
}

// The request's Content-Type header, empty when absent; read in place, as
// this runs on every review.
std::string_view ContentType(const httplib::Request& q) {
  const auto it = q.headers.find("Content-Type");
  return it == q.headers.end() ? std::string_view() : std::string_view(it->second);
}

// "application/json" in any case, optionally with parameters such as a charset.
bool IsJsonContentType(std::string_view value) {
  constexpr std::string_view kType = "application/json";
  std::string_view media = value.substr(0, value.find(';'));
  const auto first = media.find_first_not_of(' ');
  if (first == std::string_view::npos) return false;
  media = media.substr(first, media.find_last_not_of(' ') - first + 1);
  if (media.size() != kType.size()) return false;
  for (std::size_t i = 0; i < media.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(media[i])) != kType[i]) return false;
  }
  return true;
}

// cpp-httplib's task queue, run on the thread that enqueues.
class AcceptingThreadQueue final : public httplib::TaskQueue {
 public:
  void enqueue(std::function<void()> fn) override { fn(); }
  void shutdown() override {}
};

class HttpsServer : public httplib::SSLServer {
 public:
  using httplib::SSLServer::SSLServer;

  // cpp-httplib 0.11 listens with a backlog of 5: a burst of connections from
  // several API servers overflows it, and dropped SYNs are retried only after
  // a second. Its listening socket is protected, so reach it through here.
  bool RaiseListenBacklog() {
    const socket_t sock = svr_sock_;
    return sock != INVALID_SOCKET && ::listen(sock, SOMAXCONN) == 0;
  }

  // Connections are served by a ConnectionLoop from here on; call after the
  // timeouts and the keep-alive limit are set.
  bool StartConnectionLoop(std::size_t min_workers, std::size_t max_workers, std::chrono::microseconds busy_poll,
                           std::string* error) {
    ConnectionLoop::Options o;
    o.busy_poll = busy_poll;
    o.min_workers = min_workers;
    o.max_workers = max_workers;
    o.active_workers = std::min(min_workers, UsableCpus());
    o.max_requests = keep_alive_max_count_;
    o.read_timeout = std::chrono::seconds(read_timeout_sec_) + std::chrono::microseconds(read_timeout_usec_);
    o.write_timeout = std::chrono::seconds(write_timeout_sec_) + std::chrono::microseconds(write_timeout_usec_);
    loop_ = std::make_unique<ConnectionLoop>(o, exchange_);
    return loop_->Start(error);
  }
  // Closes connections that waited for a request longer than idle.
  std::size_t CloseIdleConnections(std::chrono::milliseconds idle) { return loop_ ? loop_->CloseIdle(idle) : 0; }
  // Cuts connections whose handshake or request began longer than limit ago.
  std::size_t CutOverdueConnections(std::chrono::milliseconds limit) { return loop_ ? loop_->CutOverdue(limit) : 0; }
  std::size_t OpenConnections() const { return loop_ ? loop_->connections() : 0; }
  // After listen_after_bind() has returned: lets open connections finish.
  void StopConnectionLoop() {
    if (loop_) loop_->Stop();
  }

 private:
  // cpp-httplib 0.11 hands every accepted connection to this virtual (through
  // its task queue, here AcceptingThreadQueue) and leaves process_request,
  // which reads one request from a Stream and answers it, open to subclasses:
  // loop_'s workers do the connection's handshake and serve its requests.
  bool process_and_close_socket(socket_t sock) override {
    loop_->Serve(ssl_context(), sock);
    return true;
  }

  class ServerExchange final : public TlsExchange {
   public:
    explicit ServerExchange(HttpsServer& s) : server_(s) {}
    bool Exchange(TlsStream& stream, bool last, bool& closed) override {
      SSL* ssl = stream.ssl();
      return server_.process_request(stream, last, closed, [ssl](httplib::Request& req) { req.ssl = ssl; });
    }
    bool Stopping() const override { return server_.svr_sock_ == INVALID_SOCKET; }

   private:
    HttpsServer& server_;
  };

  ServerExchange exchange_{*this};
  std::unique_ptr<ConnectionLoop> loop_;
};

}  // namespace
}  // namespace ray_webhook

template <>
struct fmt::formatter<ray_webhook::LogValue> {
  constexpr auto parse(fmt::format_parse_context& ctx) { return ctx.begin(); }
  template <typename Context>
  auto format(const ray_webhook::LogValue& v, Context& ctx) const {
    std::string shown;
    ray_webhook::AppendLogValue(v.value, &shown);
    return std::copy(shown.begin(), shown.end(), ctx.out());
  }
};

namespace ray_webhook {

struct WebhookServer::Impl {
  explicit Impl(const Config& c)
      : config(c),
        server(config.tls_cert_file.c_str(), config.tls_key_file.c_str()),
        certificate(config.tls_cert_file, config.tls_key_file),
        // A request may wait for the Kubernetes API on top of its own deadline.
        request_deadline(config.request_timeout + config.kube_api.timeout) {
    if (config.kube_api.configured()) {
      kube = std::make_unique<KubeApiClient>(config.kube_api);
      lookup = [this](std::string_view ns, std::string_view cluster) {
        PodListResult r = kube->ListHeadPods(ns, cluster);
        metrics.CountHeadLookup(r.ok);
        if (!r.ok) {
          spdlog::warn("head lookup failed namespace={} cluster={} error={}", LogValue{ns}, LogValue{cluster},
                       LogValue{r.error});
        }
        return r;
      };
    }
  }

  void Review(const httplib::Request& req, httplib::Response& res, Endpoint endpoint) {
    ReviewDecoderPool::Lease decoder = decoders.Acquire();
    const std::string_view path = EndpointPath(endpoint);
    metrics.RequestStarted(path);
    const auto start = Clock::now();
    ReviewOutcome out =
        HandleReview(req.body, endpoint, config, *decoder, lookup, req.body.capacity() - req.body.size());
    const auto elapsed = Clock::now() - start;
    res.status = out.http_status;
    SetJsonBody(res, std::move(out.body));
    metrics.RequestFinished(path, out.http_status, std::chrono::duration<double>(elapsed).count());
    if (out.http_status != 200) {
      spdlog::warn("review rejected path={} remote={} status={} error={}", path, req.remote_addr, out.http_status,
                   LogValue{out.error});
      return;
    }
    metrics.CountDecision(out.decision);
    if (!spdlog::should_log(spdlog::level::info)) return;  // skip building the line
    thread_local std::string line;
    line.clear();
    AppendReviewLogLine(
        ReviewLogFieldsOf(out, endpoint, std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count()),
        &line);
    // A ready line: spdlog's string_view overload skips fmt altogether.
    spdlog::default_logger_raw()->log(spdlog::level::info, spdlog::string_view_t(line.data(), line.size()));
  }

  void Routes() {
    server.Post("/mutate", [this](const httplib::Request& q, httplib::Response& r) { Review(q, r, Endpoint::kMutate); });
    server.Post("/validate",
                [this](const httplib::Request& q, httplib::Response& r) { Review(q, r, Endpoint::kValidate); });
    server.Get("/healthz", [](const httplib::Request&, httplib::Response& r) { r.set_content("ok\n", "text/plain"); });
    server.Get("/readyz", [this](const httplib::Request&, httplib::Response& r) {
      if (draining) {
        r.status = 503;
        r.set_content("shutting down\n", "text/plain");
      } else {
        r.set_content("ok\n", "text/plain");
      }
    });
    server.Get("/metrics", [this](const httplib::Request&, httplib::Response& r) {
      r.set_content(metrics.Render(), "text/plain; version=0.0.4; charset=utf-8");
    });

    // Runs once the headers are read, before the body: cheap refusals go here.
    server.set_pre_routing_handler([this](const httplib::Request& q, httplib::Response& r) {
      const bool review = q.path == "/mutate" || q.path == "/validate";
      const bool get_only = q.path == "/healthz" || q.path == "/readyz" || q.path == "/metrics";
      // cpp-httplib answers a wrong method on a known path with 404; say 405 and what is allowed.
      if ((review && q.method != "POST") || (get_only && q.method != "GET" && q.method != "HEAD")) {
        r.set_header("Allow", review ? "POST" : "GET, HEAD");
        SetError(r, 405, "MethodNotAllowed", "method " + q.method + " is not allowed on " + q.path);
        return httplib::Server::HandlerResponse::Handled;
      }
      if (review) {
        const std::string_view type = ContentType(q);
        if (!IsJsonContentType(type)) {
          SetError(r, 415, "UnsupportedMediaType",
                   "Content-Type must be application/json, got \"" + std::string(type.substr(0, 64)) + "\"");
          return httplib::Server::HandlerResponse::Handled;
        }
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    // Called for every status >= 400; fill in only answers that have no body yet.
    server.set_error_handler(
        httplib::Server::HandlerWithResponse([this](const httplib::Request& q, httplib::Response& r) {
          if (!r.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
          switch (r.status) {
            case 404: SetError(r, 404, "NotFound", "no such path: " + q.path.substr(0, 256)); break;
            case 413:
              SetError(r, 413, "RequestEntityTooLarge",
                       "request body exceeds " + std::to_string(config.max_body_bytes) + " bytes");
              break;
            default: SetError(r, r.status, "BadRequest", "the request could not be served");
          }
          return httplib::Server::HandlerResponse::Handled;
        }));
    server.set_exception_handler([](const httplib::Request& q, httplib::Response& r, std::exception_ptr ep) {
      std::string what = "unknown error";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      spdlog::error("handler failed path={} error={}", q.path, LogValue{what});
      SetError(r, 500, "InternalError", "internal error while handling the request");
    });
  }

  void ReloadCertificate() {
    std::string error;
    switch (certificate.Reload(&error)) {
      case ServingCertificate::ReloadResult::kUnchanged: return;
      case ServingCertificate::ReloadResult::kReloaded:
        metrics.CountCertificateRead(true);
        last_certificate_error.clear();
        spdlog::info("serving certificate loaded: {}", certificate.Describe());
        return;
      case ServingCertificate::ReloadResult::kRejected:
        // Counted each time; logged when the reason changes, not every poll.
        metrics.CountCertificateRead(false);
        if (error != last_certificate_error) {
          spdlog::error("serving certificate not reloaded, the current one stays in service: {}", error);
          last_certificate_error = error;
        }
        return;
    }
  }

  // Certificate reloads, the per-request deadline and shrinking idle decoders, until Serve() ends.
  void Maintain() {
    auto next_reload = Clock::now() + config.cert_reload_interval;
    auto next_decoder_shrink = Clock::now() + kDecoderShrinkInterval;
    std::unique_lock<std::mutex> lock(mutex);
    while (!served) {
      cv.wait_for(lock, std::chrono::milliseconds(250));
      lock.unlock();
      server.CloseIdleConnections(config.idle_timeout);
      if (std::size_t cut = server.CutOverdueConnections(request_deadline)) {
        metrics.CountConnectionsCut(cut);
        spdlog::warn("closed {} connection(s) whose handshake or request ran past --request-timeout", cut);
      }
      if (Clock::now() >= next_reload) {
        ReloadCertificate();
        next_reload = Clock::now() + config.cert_reload_interval;
      }
      if (Clock::now() >= next_decoder_shrink) {
        if (std::size_t shrunk = decoders.ShrinkIdle()) spdlog::debug("gave back the buffers of {} idle decoder(s) grown by large reviews", shrunk);
        next_decoder_shrink = Clock::now() + kDecoderShrinkInterval;
      }
      lock.lock();
    }
  }

  Config config;
  ReviewDecoderPool decoders;  // outlives the server's threads
  HttpsServer server;
  ServingCertificate certificate;
  const std::chrono::milliseconds request_deadline;
  Metrics metrics;
  std::unique_ptr<KubeApiClient> kube;
  HeadLookup lookup;  // empty when no API is configured
  std::atomic<bool> draining{false};
  std::string last_certificate_error;  // the maintenance thread's own
  std::mutex mutex;
  std::condition_variable cv;
  bool served = false;  // guarded by mutex
};

WebhookServer::WebhookServer(const Config& config) : impl_(std::make_unique<Impl>(config)) {}
WebhookServer::~WebhookServer() = default;

bool WebhookServer::Bind(std::string* error) {
  Impl& m = *impl_;
  auto& s = m.server;
  const Config& c = m.config;
  std::string why;
  if (!s.is_valid() || m.certificate.Reload(&why) != ServingCertificate::ReloadResult::kReloaded) {
    *error = "cannot load the TLS certificate \"" + c.tls_cert_file + "\" and key \"" + c.tls_key_file + "\"" +
             (why.empty() ? " (missing, unreadable, or not a matching PEM pair)" : ": " + why);
    return false;
  }
  m.metrics.CountCertificateRead(true);
  if (!ApplyTlsPolicy(s.ssl_context(), c, error) || !m.certificate.Install(s.ssl_context())) return false;
  // Idle keep-alive connections give their 2 x 16 KiB record buffers back.
  SSL_CTX_set_mode(s.ssl_context(), SSL_MODE_RELEASE_BUFFERS);
  s.set_tcp_nodelay(true);
  // cpp-httplib's default socket options add SO_REUSEPORT, which lets a second
  // process bind the same port silently and take half the connections.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  s.set_keep_alive_max_count(100000);
  // Only advertised now (each answer's Keep-Alive header); Maintain() closes
  // connections that waited longer, through the connection loop.
  s.set_keep_alive_timeout(std::max<time_t>(1, std::chrono::duration_cast<std::chrono::seconds>(c.idle_timeout).count()));
  const auto read = std::chrono::duration_cast<std::chrono::microseconds>(c.request_timeout);
  s.set_read_timeout(read.count() / 1000000, read.count() % 1000000);
  s.set_write_timeout(read.count() / 1000000, read.count() % 1000000);
  s.set_payload_max_length(c.max_body_bytes);
  const auto max_threads = static_cast<std::size_t>(c.max_connections);
  // ConnectionLoop::Serve() only registers the new connection, so it runs on
  // cpp-httplib's accepting thread instead of a hop to a task queue.
  s.new_task_queue = [] { return new AcceptingThreadQueue(); };
  if (!s.StartConnectionLoop(static_cast<std::size_t>(c.threads), max_threads, c.busy_poll, error)) return false;
  m.Routes();
  if (!s.bind_to_port(c.bind_address, c.port)) {
    *error = "cannot listen on " + c.bind_address + ":" + std::to_string(c.port);
    return false;
  }
  if (!s.RaiseListenBacklog()) spdlog::warn("could not raise the listen backlog; bursts of connections may wait");
  spdlog::info("serving certificate: {}", m.certificate.Describe());
  if (c.head_uniqueness.lookup && c.second_head_mode != RuleMode::kOff && !c.kube_api.configured()) {
    spdlog::warn("second-head lookup inactive: no Kubernetes API configured (not in a cluster, no --kube-api-server)");
  } else if (c.kube_api.configured()) {
    spdlog::info("second-head lookup via {} timeout={}ms", c.kube_api.server, c.kube_api.timeout.count());
  }
  return true;
}

bool WebhookServer::Serve() {
  Impl& m = *impl_;
  std::thread maintenance([&m] { m.Maintain(); });
  const bool ok = m.server.listen_after_bind();
  m.server.StopConnectionLoop();
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    m.served = true;
  }
  m.cv.notify_all();
  maintenance.join();
  return ok;
}

bool WebhookServer::Shutdown() {
  Impl& m = *impl_;
  m.draining = true;
  spdlog::info("draining: /readyz answers 503; still accepting for {}ms", m.config.drain_delay.count());
  std::unique_lock<std::mutex> lock(m.mutex);
  m.cv.wait_for(lock, m.config.drain_delay, [&m] { return m.served; });
  lock.unlock();
  spdlog::info("no longer accepting; finishing in-flight requests ({} connections open)", m.server.OpenConnections());
  const auto deadline = Clock::now() + m.config.shutdown_grace;
  lock.lock();
  while (!m.served && Clock::now() < deadline) {
    lock.unlock();
    // Again each round: cpp-httplib ignores stop() until its listen loop has
    // started. Serve() then stops the connection loop, which shuts down idle
    // keep-alive connections and closes busy ones after their answer.
    m.server.stop();
    lock.lock();
    m.cv.wait_for(lock, std::chrono::milliseconds(50), [&m] { return m.served; });
  }
  return m.served;
}

}  // namespace ray_webhook
