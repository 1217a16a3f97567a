#include "ray_webhook/server/webhook_server.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <thread>

#include "connection_budget.h"
#include "connection_counters.h"
#include "maintenance.h"
#include "port_handler.h"
#include "ray_webhook/core/decode/review_decoder_pool.h"
#include "ray_webhook/http/http_session.h"
#include "ray_webhook/kube/kube_api_client.h"
#include "ray_webhook/live_audit/periodic_audit.h"
#include "ray_webhook/live_audit/watched_audit.h"
#include "ray_webhook/mutex.h"
#include "ray_webhook/net/connection_loop.h"
#include "ray_webhook/net/listening_socket.h"
#include "ray_webhook/operator_release/release_follower.h"
#include "ray_webhook/server/current_policy.h"
#include "ray_webhook/server/metrics.h"
#include "ray_webhook/server/review_path.h"
#include "ray_webhook/server/usable_cpus.h"
#include "ray_webhook/thread_annotations.h"
#include "ray_webhook/tls/serving_certificate.h"
#include "serving_context.h"

namespace ray_webhook {
namespace {

using Clock = std::chrono::steady_clock;
// Requests served on one connection before it closes, as every answer's Keep-Alive header says.
constexpr std::size_t kKeepAliveMaxCount = 100000;

// --kuberay-version auto: a release chosen from the operator's Deployment is put in force and exported.
class ReleaseInForce final : public ReleaseObserver {
 public:
  ReleaseInForce(CurrentPolicy& policy, Metrics& metrics) : policy_(policy), metrics_(metrics) {}
  void ReleaseChosen(const ReleaseChoice& choice) override {
    if (!policy_.SetTarget(choice.target)) {
      spdlog::warn("kuberay release: {} distinct releases were put in force; keeping {}", CurrentPolicy::kMaxKept,
                   ShowKubeRayVersion(policy_.Get().kuberay.version));
      return;
    }
    metrics_.SetKubeRayRelease(ShowKubeRayVersion(choice.target.version), ReleaseSourceName(choice.source));
  }
  void WatchProblem(std::string_view resource, std::string_view problem) override {
    metrics_.CountWatchProblem(resource, problem);
  }

 private:
  CurrentPolicy& policy_;
  Metrics& metrics_;
};

}  // namespace

// The parts, in the order they are built; the loop goes first on the way
// out, since its threads use the handlers, the sessions and the review path.
struct WebhookServer::Impl {
  explicit Impl(const ServerConfig& c) : config(c), certificate(config.tls.cert_file, config.tls.key_file) {
    if (config.kube_api.configured()) kube = std::make_unique<KubeApiClient>(config.kube_api);
    reviews = std::make_unique<ReviewPath>(policy, decoders, metrics, kube.get(), config.kube_api.timeout);
  }

  ~Impl() {
    loop.reset();
    SSL_CTX_free(ctx);
  }

  ServerConfig config;
  CurrentPolicy policy{config.policy};
  ReviewDecoderPool decoders;  // outlives the loop's threads
  ServingCertificate certificate;
  Metrics metrics;
  std::unique_ptr<KubeApiClient> kube;
  std::unique_ptr<ReviewPath> reviews;  // uses the decoders, the metrics and kube
  // --audit-interval, --audit-mode: one of the two; stopped before kube and metrics go.
  std::unique_ptr<PeriodicAudit> audit;
  std::unique_ptr<WatchedAudit> watched_audit;
  ReleaseInForce release_in_force{policy, metrics};
  std::unique_ptr<ReleaseFollower> release;  // --kuberay-version auto; stopped before kube and metrics go
  std::atomic<bool> draining{false};
  ByteBudget request_bytes{64 * 1024 * 1024};  // held by all connections together
  SSL_CTX* ctx = nullptr;
  std::unique_ptr<ConnectionLoop> loop;
  std::unique_ptr<ConnectionCounters> counters;  // of the loop
  std::unique_ptr<PortHandler> webhook_handler;
  std::unique_ptr<PortHandler> probe_handler;
  std::unique_ptr<HttpSessions> webhook_sessions;
  std::unique_ptr<HttpSessions> probe_sessions;
  Mutex mutex;
  std::condition_variable cv;
  bool shut_down GUARDED_BY(mutex) = false;  // Shutdown() is done with the connections
  bool served GUARDED_BY(mutex) = false;     // Serve() is done
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
  m.metrics.SetCertificateExpiration(m.certificate.NotAfterUnixSeconds());
  if (c.audit_interval.count() > 0) {
    if (!m.kube) {
      return Status::Error("--audit-interval needs the Kubernetes API: run in a cluster or give --kube-api-server");
    }
    m.metrics.EnableAudit();
    if (c.audit_watch) {
      WatchedAuditOptions o;
      o.refresh = c.audit_interval;
      o.cost_leak_limits = c.cost_leak_limits;
      o.reports = c.audit_reports;
      m.watched_audit = std::make_unique<WatchedAudit>(
          *m.kube, [&m] { return &m.policy.Get(); }, m.metrics, o);
    } else {
      m.audit = std::make_unique<PeriodicAudit>(
          *m.kube, [&m] { return m.policy.Get(); }, c.audit_interval, m.metrics, c.audit_reports, c.cost_leak_limits);
    }
  }
  std::function<std::string()> ready_detail;
  if (c.kuberay_auto && !m.kube) {
    // As the second-head lookup: outside a cluster the fixed release serves, and says so.
    const std::string why =
        "no Kubernetes API configured (not in a cluster, no --kube-api-server); judging by the "
        "fixed release " +
        ShowKubeRayVersion(c.policy.kuberay.version);
    spdlog::warn("--kuberay-version auto: {}", why);
    m.metrics.SetKubeRayRelease(ShowKubeRayVersion(c.policy.kuberay.version), "no_api");
    ready_detail = [why] { return "kuberay release: " + why; };
  } else if (c.kuberay_auto) {
    ReleaseFollowerOptions o;
    o.namespace_name = c.kuberay_operator_namespace;
    o.label_selector = c.kuberay_operator_selector;
    m.release = std::make_unique<ReleaseFollower>(*m.kube, o, c.policy.kuberay, m.release_in_force);
    const ReleaseChoice first = m.release->Choice();
    m.metrics.SetKubeRayRelease(ShowKubeRayVersion(first.target.version), ReleaseSourceName(first.source));
    ready_detail = [&m] { return "kuberay release: " + m.release->Choice().detail; };
  } else {
    m.metrics.SetKubeRayRelease(ShowKubeRayVersion(c.policy.kuberay.version), "flag");
  }
  Result<SSL_CTX*> ctx = NewServingContext(c.tls, m.certificate);
  if (!ctx.ok()) return ctx.status();
  m.ctx = *ctx;

  ConnectionLoop::Options o;
  o.event_loops = UsableCpus();
  o.max_blocking_workers = static_cast<std::size_t>(c.threads);
  o.max_connections = ConnectionBudget(static_cast<std::size_t>(c.max_connections));
  o.request_timeout = c.request_timeout;
  // A request may wait for the Kubernetes API on top of its own deadline.
  o.blocking_timeout = c.request_timeout + c.kube_api.timeout;
  o.idle_timeout = c.idle_timeout;
  o.busy_poll = c.busy_poll;
  m.loop = std::make_unique<ConnectionLoop>(o);
  m.counters = std::make_unique<ConnectionCounters>(*m.loop, m.metrics, o.max_connections);
  m.webhook_handler = std::make_unique<PortHandler>(true, *m.reviews, m.metrics, *m.counters, m.draining, ready_detail);
  m.probe_handler = std::make_unique<PortHandler>(false, *m.reviews, m.metrics, *m.counters, m.draining, ready_detail);
  HttpSessionOptions http;
  http.limits.max_body_bytes = c.max_body_bytes;
  http.max_requests = kKeepAliveMaxCount;
  http.idle_timeout = c.idle_timeout;
  m.webhook_sessions = std::make_unique<HttpSessions>(*m.webhook_handler, m.request_bytes, http);
  m.probe_sessions = std::make_unique<HttpSessions>(*m.probe_handler, m.request_bytes, http);

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

void WebhookServer::Serve() {
  Impl& m = *impl_;
  Maintenance maintenance(m.certificate, m.metrics, m.decoders, *m.counters, m.config.tls.reload_interval);
  maintenance.Start();
  if (m.release) m.release->Start();
  if (m.audit) {
    spdlog::info("auditing the cluster every {}ms", m.config.audit_interval.count());
    m.audit->Start();
  }
  if (m.watched_audit) {
    spdlog::info("auditing the cluster by list and watch, judged on every change and at least every {}ms",
                 m.config.audit_interval.count());
    m.watched_audit->Start();
  }
  {
    MutexLock lock(&m.mutex);
    while (!m.shut_down) lock.Wait(m.cv);
  }
  m.loop->Stop();
  if (m.audit) m.audit->Stop();
  if (m.watched_audit) m.watched_audit->Stop();
  if (m.release) m.release->Stop();
  maintenance.Stop();
  {
    MutexLock lock(&m.mutex);
    m.served = true;
  }
  m.cv.notify_all();
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
