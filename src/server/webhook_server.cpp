#include "ray_webhook/server/webhook_server.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <thread>

#include "ray_webhook/core/decode/review_decoder_pool.h"
#include "ray_webhook/core/review/review_handler.h"
#include "ray_webhook/http/http_handler.h"
#include "ray_webhook/http/http_session.h"
#include "ray_webhook/http/refusal.h"
#include "ray_webhook/kube/kube_api_client.h"
#include "ray_webhook/live_audit/periodic_audit.h"
#include "ray_webhook/mutex.h"
#include "ray_webhook/net/connection_loop.h"
#include "ray_webhook/net/listening_socket.h"
#include "ray_webhook/net/open_file_limit.h"
#include "ray_webhook/server/metrics.h"
#include "ray_webhook/server/review_path.h"
#include "ray_webhook/server/route.h"
#include "ray_webhook/server/usable_cpus.h"
#include "ray_webhook/thread_annotations.h"
#include "ray_webhook/tls/serving_certificate.h"
#include "ray_webhook/tls/tls_policy.h"

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

}  // namespace

struct WebhookServer::Impl {
  // What a listener's requests are routed to: the webhook port serves reviews,
  // the probes and /metrics; the probe port, the probes alone.
  class PortHandler final : public HttpHandler {
   public:
    PortHandler(Impl& server, bool webhook_port) : server_(server), webhook_port_(webhook_port) {}
    Refusal CheckHead(const RequestHead& head) override;
    Handled Handle(const HttpRequest& request) override;
    bool Stopping() const override;

   private:
    Impl& server_;
    const bool webhook_port_;
  };

  explicit Impl(const ServerConfig& c)
      : config(c),
        certificate(config.tls.cert_file, config.tls.key_file),
        webhook_handler(*this, true),
        probe_handler(*this, false) {
    if (config.kube_api.configured()) kube = std::make_unique<KubeApiClient>(config.kube_api);
    reviews = std::make_unique<ReviewPath>(config.policy, decoders, metrics, kube.get(), config.kube_api.timeout);
  }

  ~Impl() {
    loop.reset();  // its threads use the handlers
    SSL_CTX_free(ctx);
  }

  HttpAnswer ProbeAnswer(std::string_view path) {
    HttpAnswer answer;
    answer.content_type = "text/plain";
    if (path == "/readyz" && draining) {
      answer.status = 503;
      answer.body = "shutting down\n";
    } else {
      answer.body = "ok\n";
    }
    return answer;
  }

  HttpAnswer MetricsAnswer() {
    ExportConnectionCounters();
    HttpAnswer answer;
    answer.content_type = "text/plain; version=0.0.4; charset=utf-8";
    answer.body = metrics.Render();
    return answer;
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
      metrics.SetCertificateExpiration(certificate.NotAfterUnixSeconds());
      last_certificate_error.clear();
      spdlog::info("serving certificate loaded: {}", certificate.Describe());
    }
  }

  // The loop's counters as metrics: deltas since the last look. From the
  // maintenance thread, and before /metrics renders so that it is current.
  void ExportConnectionCounters() {
    MutexLock lock(&export_mutex);
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
    MutexLock lock(&mutex);
    while (!served) {
      lock.WaitUntil(cv, Clock::now() + std::chrono::milliseconds(250));
      lock.Unlock();
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
      lock.Lock();
    }
  }

  ServerConfig config;
  ReviewDecoderPool decoders;  // outlives the loop's threads
  ServingCertificate certificate;
  Metrics metrics;
  std::unique_ptr<KubeApiClient> kube;
  std::unique_ptr<ReviewPath> reviews;   // uses the decoders, the metrics and kube
  std::unique_ptr<PeriodicAudit> audit;  // --audit-interval; stopped before kube and metrics go
  std::atomic<bool> draining{false};
  PortHandler webhook_handler;
  PortHandler probe_handler;
  ByteBudget request_bytes{64 * 1024 * 1024};  // held by all connections together
  std::unique_ptr<HttpSessions> webhook_sessions;
  std::unique_ptr<HttpSessions> probe_sessions;
  SSL_CTX* ctx = nullptr;
  std::unique_ptr<ConnectionLoop> loop;
  std::size_t max_connections = 0;
  Mutex export_mutex;
  std::size_t seen_cut GUARDED_BY(export_mutex) = 0;
  std::size_t seen_shed GUARDED_BY(export_mutex) = 0;
  std::size_t seen_refused GUARDED_BY(export_mutex) = 0;
  std::size_t seen_polls GUARDED_BY(export_mutex) = 0;
  std::string last_certificate_error;  // the maintenance thread's own
  Mutex mutex;
  std::condition_variable cv;
  bool shut_down GUARDED_BY(mutex) = false;  // Shutdown() is done with the connections
  bool served GUARDED_BY(mutex) = false;
};

Refusal WebhookServer::Impl::PortHandler::CheckHead(const RequestHead& head) {
  return RouteOf(head.method, DecodedPath(head.path), head.content_type, webhook_port_).refusal;
}

Handled WebhookServer::Impl::PortHandler::Handle(const HttpRequest& request) {
  const std::string path = DecodedPath(request.head.path);
  Handled handled;
  try {
    Route route = RouteOf(request.head.method, path, request.head.content_type, webhook_port_);
    switch (route.kind) {
      case Route::kRefused: handled.answer = AnswerOf(route.refusal); break;
      case Route::kMutate: return server_.reviews->Review(request, Endpoint::kMutate);
      case Route::kValidate: return server_.reviews->Review(request, Endpoint::kValidate);
      case Route::kAdmit: return server_.reviews->Review(request, Endpoint::kAdmit);
      case Route::kProbe: handled.answer = server_.ProbeAnswer(path); break;
      case Route::kMetrics: handled.answer = server_.MetricsAnswer(); break;
    }
  } catch (const std::exception& e) {
    handled.later.reset();
    handled.answer = HandlerFailed(path, e.what());
  }
  return handled;
}

bool WebhookServer::Impl::PortHandler::Stopping() const { return server_.draining.load(std::memory_order_relaxed); }

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
  m.metrics.SetCertificateExpiration(m.certificate.NotAfterUnixSeconds());
  if (c.audit_interval.count() > 0) {
    if (!m.kube) {
      return Status::Error("--audit-interval needs the Kubernetes API: run in a cluster or give --kube-api-server");
    }
    m.metrics.EnableAudit();
    m.audit = std::make_unique<PeriodicAudit>(*m.kube, c.policy, c.audit_interval, m.metrics, c.audit_reports);
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
  o.request_timeout = c.request_timeout;
  // A request may wait for the Kubernetes API on top of its own deadline.
  o.blocking_timeout = c.request_timeout + c.kube_api.timeout;
  o.idle_timeout = c.idle_timeout;
  o.busy_poll = c.busy_poll;
  m.loop = std::make_unique<ConnectionLoop>(o);
  HttpSessionOptions http;
  http.limits.max_body_bytes = c.max_body_bytes;
  http.max_requests = kKeepAliveMaxCount;
  http.idle_timeout = c.idle_timeout;
  m.webhook_sessions = std::make_unique<HttpSessions>(m.webhook_handler, m.request_bytes, http);
  m.probe_sessions = std::make_unique<HttpSessions>(m.probe_handler, m.request_bytes, http);

  Result<int> webhook_fd = OpenListeningSocket(c.bind_address, c.port);
  if (!webhook_fd.ok()) return webhook_fd.status();
  m.loop->AddListener(*webhook_fd, m.ctx, *m.webhook_sessions);
  if (c.probe_port != 0) {
    Result<int> probe_fd = OpenListeningSocket(c.bind_address, c.probe_port);
    if (!probe_fd.ok()) return probe_fd.status();
    m.loop->AddListener(*probe_fd, nullptr, *m.probe_sessions);
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
    MutexLock lock(&m.mutex);
    while (!m.shut_down) lock.Wait(m.cv);
  }
  m.loop->Stop();
  if (m.audit) m.audit->Stop();
  {
    MutexLock lock(&m.mutex);
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
    MutexLock lock(&m.mutex);
    m.shut_down = true;
  }
  m.cv.notify_all();
  {
    MutexLock lock(&m.mutex);
    while (!m.served) lock.Wait(m.cv);
  }
  return finished;
}

}  // namespace ray_webhook
