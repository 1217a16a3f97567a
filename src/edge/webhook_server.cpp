#include "ray_webhook/edge/webhook_server.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "connection_loop.h"
#include "http_router.h"
#include "listening_socket.h"
#include "lookup_deadline.h"
#include "metrics.h"
#include "open_file_limit.h"
#include "periodic_audit.h"
#include "ray_webhook/core/admission_response.h"
#include "ray_webhook/core/admission_text.h"
#include "ray_webhook/core/review_decoder_pool.h"
#include "ray_webhook/core/review_handler.h"
#include "ray_webhook/kube/kube_api_client.h"
#include "ray_webhook/logging/review_log_line.h"
#include "ray_webhook/tls/serving_certificate.h"
#include "ray_webhook/tls/tls_policy.h"
#include "usable_cpus.h"

namespace ray_webhook {
namespace {

using Clock = std::chrono::steady_clock;
// A decoder grown by a large review keeps its size while large reviews keep
// coming (regrowing costs page faults on every one), and gives it back within
// two of these once they stop (ReviewDecoderPool::ShrinkIdle).
constexpr auto kDecoderShrinkInterval = std::chrono::seconds(5);
// Requests served on one connection before it closes, as every answer's Keep-Alive header says.
constexpr std::size_t kKeepAliveMaxCount = 100000;
// Descriptors kept back from --max-connections: listeners, the event loops'
// own, certificate and token reads, the Kubernetes API connections.
constexpr std::size_t kReservedDescriptors = 64;

// Set on a blocking worker while it answers: only there may a review wait
// for the Kubernetes API. On an event loop, a review that would wait marks
// itself deferred and is answered again on a worker.
thread_local bool t_may_block = false;
thread_local bool t_deferred = false;

// A user-supplied value in a warn or error line, written as AppendLogValue
// writes it.
struct LogValue {
  std::string_view value;
};

// What Response::set_content does, without its copy: cpp-httplib 0.11 takes
// the body by const reference and copies it.
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

bool IsReviewPath(std::string_view path) { return path == "/mutate" || path == "/validate"; }
bool IsProbePath(std::string_view path) { return path == "/healthz" || path == "/readyz"; }

// Why a request to the webhook port is refused from its head alone, as the
// pre-routing handler and HttpExchange::AcceptsBody both decide it: a wrong
// method on a known path (405), a review that is not JSON (415).
struct HeadCheck {
  int status = 0;
  std::string reason, message, allow;
};

// webhook_port: reviews and /metrics are served there; the probe port has the probes alone.
HeadCheck CheckHead(std::string_view method, std::string_view path, std::string_view content_type, bool webhook_port) {
  HeadCheck h;
  const bool review = webhook_port && IsReviewPath(path);
  const bool get_only = IsProbePath(path) || (webhook_port && path == "/metrics");
  // cpp-httplib answers a wrong method on a known path with 404; say 405 and what is allowed.
  if ((review && method != "POST") || (get_only && method != "GET" && method != "HEAD")) {
    h.status = 405;
    h.reason = "MethodNotAllowed";
    h.message = "method " + std::string(method.substr(0, 32)) + " is not allowed on " + std::string(path);
    h.allow = review ? "POST" : "GET, HEAD";
  } else if (review && !IsJsonContentType(content_type)) {
    h.status = 415;
    h.reason = "UnsupportedMediaType";
    h.message = "Content-Type must be application/json, got \"" + std::string(content_type.substr(0, 64)) + "\"";
  } else if (!review && !get_only) {
    h.status = 404;
  }
  return h;
}

// One review's answer, from whichever path received it.
struct ReviewReply {
  int status = 200;
  std::string body;
  bool deferred = false;  // it would wait for the Kubernetes API: answer it again on a blocking worker
};

class Reviewer {
 public:
  virtual ~Reviewer() = default;
  // target: the request's path and query, read only for ?timeout= and only when
  // the review may look heads up; remote: the client's address.
  virtual ReviewReply Review(std::string_view body, std::size_t readable_padding, std::string_view target,
                             std::string_view remote, Endpoint endpoint) = 0;
};

// The first ?timeout= value of a request target, decoded as Request::get_param_value decodes it.
std::string TimeoutParam(std::string_view target) {
  const std::size_t q = target.find('?');
  if (q == std::string_view::npos) return {};
  httplib::Params params;
  httplib::detail::parse_query_text(std::string(target.substr(q + 1)), params);
  const auto it = params.find("timeout");
  return it == params.end() ? std::string() : it->second;
}

// The answer cpp-httplib 0.11's write_response_core writes for a JSON body,
// byte for byte: its headers sorted as its case-insensitive multimap keeps them.
// status: 200, 400 or 500, the only ones a review answers with.
void AppendJsonAnswer(int status, std::string_view body, bool close, long keep_alive_seconds, std::string* out) {
  out->append(status == 200   ? "HTTP/1.1 200 OK\r\n"
              : status == 400 ? "HTTP/1.1 400 Bad Request\r\n"
                              : "HTTP/1.1 500 Internal Server Error\r\n");
  if (close) out->append("Connection: close\r\n");
  out->append("Content-Length: ");
  out->append(std::to_string(body.size()));
  out->append("\r\nContent-Type: application/json\r\n");
  if (!close) {
    out->append("Keep-Alive: timeout=");
    out->append(std::to_string(keep_alive_seconds));
    out->append(", max=");
    out->append(std::to_string(kKeepAliveMaxCount));
    out->append("\r\n");
  }
  out->append("\r\n");
  out->append(body);
}

class Exchange final : public HttpExchange {
 public:
  Exchange(HttpRouter& router, const std::atomic<bool>& draining, Reviewer* reviewer, long keep_alive_seconds)
      : router_(router), draining_(draining), reviewer_(reviewer), keep_alive_seconds_(keep_alive_seconds) {}

  bool AcceptsBody(const RequestHead& head) override {
    return CheckHead(head.method, head.path, head.content_type, reviewer_ != nullptr).status == 0;
  }

  Reply Answer(const RequestHead& head, std::string_view body, std::size_t readable_padding, const PeerAddresses& peer,
               bool close, bool may_block, std::string* out, bool* client_closed) override {
    t_may_block = may_block;
    t_deferred = false;
    // A review goes straight to the reviewer: the head is already parsed and
    // checked, and cpp-httplib parsing it again cost about a third of a
    // review's CPU time (bench/journal/56-reviews-straight-to-reviewer.md).
    // Everything else is routed.
    if (reviewer_ != nullptr && IsReviewPath(head.path) &&
        CheckHead(head.method, head.path, head.content_type, true).status == 0) {
      ReviewReply reply;
      try {
        reply = reviewer_->Review(body, readable_padding, head.target, peer.remote_ip,
                                  head.path == "/mutate" ? Endpoint::kMutate : Endpoint::kValidate);
      } catch (const std::exception& e) {
        // What cpp-httplib's exception handler (CommonHandlers) answers for a routed request.
        std::string what;
        AppendLogValue(e.what(), &what);
        spdlog::error("handler failed path={} error={}", head.path, what);
        reply = ReviewReply{500, EncodeErrorStatus(500, "InternalError", "internal error while handling the request")};
      }
      if (reply.deferred) return Reply::kNeedsBlockingThread;
      // Connection: close, or HTTP/1.0 without keep-alive.
      *client_closed = head.wants_close;
      AppendJsonAnswer(reply.status, reply.body, close || head.wants_close, keep_alive_seconds_, out);
      return Reply::kAnswered;
    }
    const std::size_t start = out->size();
    router_.Process(head.forwarded, body, peer, close, out, client_closed);
    if (t_deferred) {
      out->resize(start);
      return Reply::kNeedsBlockingThread;
    }
    return Reply::kAnswered;
  }

  void Refuse(int status, std::string_view message, std::string* out) override {
    const auto [reason, phrase] = StatusNames(status);
    const std::string body = EncodeErrorStatus(status, reason, message);
    out->append(
        fmt::format("HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{}"
                    "Connection: close\r\n\r\n",
                    status, phrase, body.size(), status == 503 ? "Retry-After: 1\r\n" : ""));
    out->append(body);
  }

  bool Stopping() const override { return draining_.load(std::memory_order_relaxed); }

  // The Status reason and the HTTP reason phrase (RFC 9110) of each refusal.
  static std::pair<std::string_view, std::string_view> StatusNames(int status) {
    switch (status) {
      case 411: return {"LengthRequired", "Length Required"};
      case 413: return {"RequestEntityTooLarge", "Content Too Large"};
      case 414: return {"RequestURITooLong", "URI Too Long"};
      case 415: return {"UnsupportedMediaType", "Unsupported Media Type"};
      case 417: return {"ExpectationFailed", "Expectation Failed"};
      case 431: return {"RequestHeaderFieldsTooLarge", "Request Header Fields Too Large"};
      case 503: return {"ServiceUnavailable", "Service Unavailable"};
      case 505: return {"HTTPVersionNotSupported", "HTTP Version Not Supported"};
      default: return {"BadRequest", "Bad Request"};
    }
  }

 private:
  HttpRouter& router_;
  const std::atomic<bool>& draining_;
  Reviewer* const reviewer_;  // the webhook port's; null on the probe port
  const long keep_alive_seconds_;
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

struct WebhookServer::Impl final : Reviewer {
  explicit Impl(const ServerConfig& c)
      : config(c),
        certificate(config.tls.cert_file, config.tls.key_file),
        webhook_exchange(router, draining, this, KeepAliveSeconds()),
        probe_exchange(probe_router, draining, nullptr, KeepAliveSeconds()) {
    if (config.kube_api.configured()) kube = std::make_unique<KubeApiClient>(config.kube_api);
  }

  ~Impl() {
    loop.reset();  // its threads use the routers and the exchanges
    SSL_CTX_free(ctx);
  }

  HeadPodList LookUpHeads(std::string_view ns, std::string_view cluster, std::chrono::milliseconds deadline) {
    if (!t_may_block) {
      t_deferred = true;
      return Status::Error("deferred to a blocking worker");
    }
    HeadPodList r = kube->ListHeadPods(ns, cluster, deadline);
    metrics.CountHeadLookup(r.ok());
    if (!r.ok()) {
      spdlog::warn("head lookup failed namespace={} cluster={} error={}", LogValue{ns}, LogValue{cluster},
                   LogValue{r.error()});
    }
    return r;
  }

  // The Keep-Alive header's timeout: only advertised, the loop closes connections idle longer.
  long KeepAliveSeconds() const {
    return std::max<long>(1, std::chrono::duration_cast<std::chrono::seconds>(config.idle_timeout).count());
  }

  ReviewReply Review(std::string_view body, std::size_t readable_padding, std::string_view target,
                     std::string_view remote, Endpoint endpoint) override {
    ReviewDecoderPool::Lease decoder = decoders.Acquire();
    const std::string_view path = EndpointPath(endpoint);
    metrics.RequestStarted(path);
    const auto start = Clock::now();
    HeadLookup lookup;
    if (kube) {
      // ?timeout= is read only by a review that looks heads up: few do.
      lookup = [this, target](std::string_view ns, std::string_view cluster) {
        return LookUpHeads(ns, cluster, LookupDeadline(TimeoutParam(target), config.kube_api.timeout));
      };
    }
    ReviewOutcome out = HandleReview(body, endpoint, config.policy, *decoder, lookup, readable_padding);
    ReviewReply reply;
    if (t_deferred) {
      // Answered again on a blocking worker, where it is counted.
      metrics.RequestHandedOff(path);
      reply.deferred = true;
      return reply;
    }
    const auto elapsed = Clock::now() - start;
    reply.status = out.http_status;
    reply.body = std::move(out.body);
    metrics.RequestFinished(path, out.http_status, std::chrono::duration<double>(elapsed).count());
    if (out.http_status != 200) {
      spdlog::warn("review rejected path={} remote={} status={} error={}", path, remote, out.http_status,
                   LogValue{out.error});
      return reply;
    }
    metrics.CountDecision(out.decision);
    if (!spdlog::should_log(spdlog::level::info)) return reply;  // skip building the line
    thread_local std::string line;
    line.clear();
    AppendReviewLogLine(
        ReviewLogFieldsOf(out, endpoint, std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count()),
        &line);
    // A ready line: spdlog's string_view overload skips fmt altogether.
    spdlog::default_logger_raw()->log(spdlog::level::info, spdlog::string_view_t(line.data(), line.size()));
    return reply;
  }

  // A review that reached cpp-httplib's router: only a bodiless one on a
  // percent-encoded path that cpp-httplib decodes to a review path.
  void Review(const httplib::Request& req, httplib::Response& res, Endpoint endpoint) {
    ReviewReply reply = Review(req.body, 0, req.target, req.remote_addr, endpoint);
    if (reply.deferred) return;
    res.status = reply.status;
    SetJsonBody(res, std::move(reply.body));
  }

  void ProbeRoutes(HttpRouter& r) {
    r.Get("/healthz", [](const httplib::Request&, httplib::Response& w) { w.set_content("ok\n", "text/plain"); });
    r.Get("/readyz", [this](const httplib::Request&, httplib::Response& w) {
      if (draining) {
        w.status = 503;
        w.set_content("shutting down\n", "text/plain");
      } else {
        w.set_content("ok\n", "text/plain");
      }
    });
  }

  void CommonHandlers(HttpRouter& r, bool webhook_port) {
    // Runs once the headers are read, before the body: cheap refusals go here.
    r.set_pre_routing_handler([webhook_port](const httplib::Request& q, httplib::Response& w) {
      HeadCheck h = CheckHead(q.method, q.path, q.get_header_value("Content-Type"), webhook_port);
      if (h.status == 0 || h.status == 404) return httplib::Server::HandlerResponse::Unhandled;
      if (!h.allow.empty()) w.set_header("Allow", h.allow);
      SetError(w, h.status, h.reason, h.message);
      return httplib::Server::HandlerResponse::Handled;
    });
    // Called for every status >= 400; fill in only answers that have no body yet.
    r.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& q, httplib::Response& w) {
      if (!w.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      if (w.status == 404) {
        SetError(w, 404, "NotFound", "no such path: " + q.path.substr(0, 256));
      } else {
        SetError(w, w.status, "BadRequest", "the request could not be served");
      }
      return httplib::Server::HandlerResponse::Handled;
    }));
    r.set_exception_handler([](const httplib::Request& q, httplib::Response& w, std::exception_ptr ep) {
      std::string what = "unknown error";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      spdlog::error("handler failed path={} error={}", q.path, LogValue{what});
      SetError(w, 500, "InternalError", "internal error while handling the request");
    });
    r.set_keep_alive_max_count(kKeepAliveMaxCount);
    r.set_keep_alive_timeout(KeepAliveSeconds());
  }

  void Routes() {
    router.Post("/mutate",
                [this](const httplib::Request& q, httplib::Response& r) { Review(q, r, Endpoint::kMutate); });
    router.Post("/validate",
                [this](const httplib::Request& q, httplib::Response& r) { Review(q, r, Endpoint::kValidate); });
    ProbeRoutes(router);
    router.Get("/metrics", [this](const httplib::Request&, httplib::Response& r) {
      ExportConnectionCounters();
      r.set_content(metrics.Render(), "text/plain; version=0.0.4; charset=utf-8");
    });
    CommonHandlers(router, true);
    ProbeRoutes(probe_router);
    CommonHandlers(probe_router, false);
  }

  void ReloadCertificate() {
    const Result<bool> reloaded = certificate.Reload();
    if (!reloaded.ok()) {
      // Counted each time; logged when the reason changes, not every poll.
      metrics.CountCertificateRead(false);
      if (reloaded.error() != last_certificate_error) {
        spdlog::error("serving certificate not reloaded, the current one stays in service: {}", reloaded.error());
        last_certificate_error = reloaded.error();
      }
    } else if (*reloaded) {
      metrics.CountCertificateRead(true);
      last_certificate_error.clear();
      spdlog::info("serving certificate loaded: {}", certificate.Describe());
    }
  }

  // The loop's counters as metrics: deltas since the last look. From the
  // maintenance thread, and before /metrics renders so that it is current.
  void ExportConnectionCounters() {
    std::lock_guard<std::mutex> lock(export_mutex);
    const std::size_t cut = loop->connections_cut(), shed = loop->connections_shed(),
                      refused = loop->connections_refused(), polls = loop->busy_polls();
    if (cut > seen_cut) {
      metrics.CountConnectionsCut(cut - seen_cut);
      spdlog::warn("closed {} connection(s) whose handshake or request ran past --request-timeout", cut - seen_cut);
    }
    if (shed > seen_shed) metrics.CountConnectionsShed(shed - seen_shed);
    if (refused > seen_refused) {
      metrics.CountConnectionsRefused(refused - seen_refused);
      spdlog::warn("refused {} connection(s): --max-connections ({}) were open and none idle", refused - seen_refused,
                   max_connections);
    }
    if (polls > seen_polls) metrics.CountBusyPolls(polls - seen_polls);
    seen_cut = cut;
    seen_shed = shed;
    seen_refused = refused;
    seen_polls = polls;
    metrics.SetOpenConnections(loop->connections());
  }

  // Certificate reloads, connection counters and shrinking idle decoders, until Serve() ends.
  void Maintain() {
    auto next_reload = Clock::now() + config.tls.reload_interval;
    auto next_decoder_shrink = Clock::now() + kDecoderShrinkInterval;
    std::unique_lock<std::mutex> lock(mutex);
    while (!served) {
      cv.wait_for(lock, std::chrono::milliseconds(250));
      lock.unlock();
      ExportConnectionCounters();
      if (Clock::now() >= next_reload) {
        ReloadCertificate();
        next_reload = Clock::now() + config.tls.reload_interval;
      }
      if (Clock::now() >= next_decoder_shrink) {
        if (std::size_t shrunk = decoders.ShrinkIdle()) {
          spdlog::debug("gave back the buffers of {} idle decoder(s) grown by large reviews", shrunk);
        }
        next_decoder_shrink = Clock::now() + kDecoderShrinkInterval;
      }
      lock.lock();
    }
  }

  ServerConfig config;
  ReviewDecoderPool decoders;  // outlives the loop's threads
  ServingCertificate certificate;
  Metrics metrics;
  std::unique_ptr<KubeApiClient> kube;
  std::unique_ptr<PeriodicAudit> audit;  // --audit-interval; stopped before kube and metrics go
  std::atomic<bool> draining{false};
  HttpRouter router;
  HttpRouter probe_router;
  Exchange webhook_exchange;
  Exchange probe_exchange;
  SSL_CTX* ctx = nullptr;
  std::unique_ptr<ConnectionLoop> loop;
  std::size_t max_connections = 0;
  std::mutex export_mutex;
  std::size_t seen_cut = 0, seen_shed = 0, seen_refused = 0, seen_polls = 0;  // guarded by export_mutex
  std::string last_certificate_error;                                         // the maintenance thread's own
  std::mutex mutex;
  std::condition_variable cv;
  bool shut_down = false;  // guarded by mutex: Shutdown() is done with the connections
  bool served = false;     // guarded by mutex
};

WebhookServer::WebhookServer(const ServerConfig& config) : impl_(std::make_unique<Impl>(config)) {}
WebhookServer::~WebhookServer() = default;

Status WebhookServer::Bind() {
  Impl& m = *impl_;
  const ServerConfig& c = m.config;
  if (Result<bool> loaded = m.certificate.Reload(); !loaded.ok() || !*loaded) {
    return Status::Error("cannot load the TLS certificate \"" + c.tls.cert_file + "\" and key \"" + c.tls.key_file +
                         "\"" +
                         (loaded.ok() ? " (missing, unreadable, or not a matching PEM pair)" : ": " + loaded.error()));
  }
  m.metrics.CountCertificateRead(true);
  if (c.audit_interval.count() > 0) {
    if (!m.kube) {
      return Status::Error("--audit-interval needs the Kubernetes API: run in a cluster or give --kube-api-server");
    }
    m.metrics.EnableAudit();
    m.audit = std::make_unique<PeriodicAudit>(*m.kube, c.policy, c.audit_interval, m.metrics);
  }
  m.ctx = SSL_CTX_new(TLS_server_method());
  if (m.ctx == nullptr) return Status::Error("cannot set up TLS");
  if (Status tls = ApplyTlsPolicy(m.ctx, c.tls); !tls.ok()) return tls;
  if (!m.certificate.Install(m.ctx)) return Status::Error("cannot set up TLS");
  // Idle connections give their 2 x 16 KiB record buffers back; writes go
  // out as far as the socket takes them and resume from where they stopped.
  SSL_CTX_set_mode(m.ctx,
                   SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // One read() per TLS record instead of two (its 5-byte header, then the
  // rest). Safe because the loop reads until SSL_ERROR_WANT_READ before it
  // waits on the socket, so nothing is left in OpenSSL's buffer unseen.
  SSL_CTX_set_read_ahead(m.ctx, 1);
  m.Routes();

  const std::size_t descriptors = RaiseOpenFileLimit();
  m.max_connections = static_cast<std::size_t>(c.max_connections);
  if (descriptors < m.max_connections + kReservedDescriptors) {
    m.max_connections =
        descriptors > 2 * kReservedDescriptors ? descriptors - kReservedDescriptors : kReservedDescriptors;
    spdlog::warn("the open-file limit is {}: serving at most {} connections instead of --max-connections {}",
                 descriptors, m.max_connections, c.max_connections);
  }
  ConnectionLoop::Options o;
  o.event_loops = UsableCpus();
  o.max_blocking_workers = static_cast<std::size_t>(c.threads);
  o.max_connections = m.max_connections;
  o.max_requests_per_connection = kKeepAliveMaxCount;
  o.limits.max_body_bytes = c.max_body_bytes;
  o.request_timeout = c.request_timeout;
  // A request may wait for the Kubernetes API on top of its own deadline.
  o.blocking_timeout = c.request_timeout + c.kube_api.timeout;
  o.idle_timeout = c.idle_timeout;
  o.busy_poll = c.busy_poll;
  m.loop = std::make_unique<ConnectionLoop>(o);

  Result<int> webhook_fd = OpenListeningSocket(c.bind_address, c.port);
  if (!webhook_fd.ok()) return webhook_fd.status();
  m.loop->AddListener(*webhook_fd, m.ctx, m.webhook_exchange);
  if (c.probe_port != 0) {
    Result<int> probe_fd = OpenListeningSocket(c.bind_address, c.probe_port);
    if (!probe_fd.ok()) return probe_fd.status();
    m.loop->AddListener(*probe_fd, nullptr, m.probe_exchange);
  }
  if (Status started = m.loop->Start(); !started.ok()) return started;
  spdlog::info("serving certificate: {}", m.certificate.Describe());
  const PolicyConfig& p = c.policy;
  if (p.head_uniqueness.lookup && p.second_head_mode != RuleMode::kOff && !c.kube_api.configured()) {
    spdlog::warn("second-head lookup inactive: no Kubernetes API configured (not in a cluster, no --kube-api-server)");
  } else if (c.kube_api.configured()) {
    spdlog::info("second-head lookup via {} timeout={}ms", c.kube_api.server, c.kube_api.timeout.count());
  }
  return Status::Ok();
}

bool WebhookServer::Serve() {
  Impl& m = *impl_;
  std::thread maintenance([&m] { m.Maintain(); });
  if (m.audit) {
    spdlog::info("auditing the cluster every {}ms", m.config.audit_interval.count());
    m.audit->Start();
  }
  {
    std::unique_lock<std::mutex> lock(m.mutex);
    m.cv.wait(lock, [&m] { return m.shut_down; });
  }
  m.loop->Stop();
  if (m.audit) m.audit->Stop();
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    m.served = true;
  }
  m.cv.notify_all();
  maintenance.join();
  return true;
}

bool WebhookServer::Shutdown() {
  Impl& m = *impl_;
  m.draining = true;
  spdlog::info("draining: /readyz answers 503 and every answer closes its connection; still accepting for {}ms",
               m.config.drain_delay.count());
  std::this_thread::sleep_for(m.config.drain_delay);
  m.loop->StopAccepting();
  m.loop->CloseIdle();
  spdlog::info("no longer accepting; finishing in-flight requests ({} connections open)", m.loop->connections());
  const auto deadline = Clock::now() + m.config.shutdown_grace;
  while (m.loop->connections() > 0 && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const bool finished = m.loop->connections() == 0;
  {
    std::lock_guard<std::mutex> lock(m.mutex);
    m.shut_down = true;
  }
  m.cv.notify_all();
  {
    std::unique_lock<std::mutex> lock(m.mutex);
    m.cv.wait(lock, [&m] { return m.served; });
  }
  return finished;
}

}  // namespace ray_webhook
