// Metrics: the server's Prometheus metrics, rendered by prometheus-cpp.
//
// Contract: controller-runtime's webhook metric names and labels, so existing
// dashboards work (controller_runtime_webhook_requests_total{webhook,code},
// controller_runtime_webhook_latency_seconds{webhook},
// controller_runtime_webhook_requests_in_flight{webhook}), its certificate
// watcher counters (certwatcher_read_certificate_total and _errors_total),
// the serving certificate's notAfter
// (ray_webhook_serving_certificate_expiration_timestamp_seconds), and the
// project's own ray_webhook_* counters; with the periodic audit on
// (--audit-interval, EnableAudit), its gauges ray_webhook_audit_findings{rule}
// (every rule, zeros included), ray_webhook_rayclusters_with_extra_heads and
// ray_webhook_audit_last_success_timestamp_seconds, and the counter
// ray_webhook_audit_failures_total. All methods but EnableAudit are thread-safe.
// The per-request path takes no lock of its own and never builds label sets:
// with many server threads on one core, a lock held by a preempted thread
// stalls every other request behind it.
#pragma once

#include <prometheus/counter.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "ray_webhook/audit/audit_report.h"
#include "ray_webhook/core/model/decision.h"
#include "ray_webhook/live_audit/audit_gauges.h"
#include "ray_webhook/mutex.h"
#include "ray_webhook/thread_annotations.h"

namespace ray_webhook {

class Metrics : public AuditGauges {
 public:
  Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;

  // One webhook request on `webhook` ("/mutate" or "/validate").
  void RequestStarted(std::string_view webhook);
  void RequestFinished(std::string_view webhook, int http_code, double seconds);
  // What a review decided: mutations by kind, denials by rule, warnings.
  void CountDecision(const Decision& decision);
  void CountCertificateRead(bool ok);
  // The notAfter of the certificate in service, as Unix time.
  void SetCertificateExpiration(std::int64_t not_after);
  void CountHeadLookup(bool ok);
  void CountConnectionsCut(std::size_t n);
  // Connections closed for a new one at --max-connections, and new ones
  // closed at once because nothing idle could make room.
  void CountConnectionsShed(std::size_t n);
  void CountConnectionsRefused(std::size_t n);
  void CountBusyPolls(std::size_t n);
  void SetOpenConnections(std::size_t n);
  // Registers the audit's metrics; before the server starts its threads.
  void EnableAudit();
  // The last audit that read the whole cluster, finished at unix_seconds.
  void SetAuditResult(const AuditReport& report, double unix_seconds) override;
  void CountAuditFailure() override;
  // --kuberay-version auto: the release in force, as
  // ray_webhook_kuberay_release_info{version,source} 1 (source "operator",
  // or why the fixed release is in force: "no_operator", "ambiguous", ...;
  // the earlier series is removed), and problems of the API watches as
  // ray_webhook_watch_problems_total{resource,problem}.
  void SetKubeRayRelease(std::string_view version, std::string_view source);
  void CountWatchProblem(std::string_view resource, std::string_view problem) override;

  // The Prometheus text exposition format (version 0.0.4).
  std::string Render() const;

 private:
  // prometheus-cpp's Histogram locks a mutex on every Observe, so latency is
  // kept in atomics here and handed to the serializer as a histogram family.
  static constexpr std::size_t kBuckets = 16;
  struct Latency {
    std::array<std::atomic<std::uint64_t>, kBuckets + 1> counts{};  // the last one is +Inf
    std::atomic<std::uint64_t> sum_ns{0};
  };
  struct PerWebhook {
    prometheus::Gauge* in_flight;
    Latency latency;
    std::array<std::atomic<prometheus::Counter*>, 600> by_code{};  // HTTP status -> counter, made on first use
  };
  PerWebhook& For(std::string_view webhook);
  prometheus::Counter& Code(PerWebhook& w, std::string_view webhook, int code);

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>* requests_;
  prometheus::Family<prometheus::Gauge>* in_flight_;
  prometheus::Family<prometheus::Counter>* mutations_;
  prometheus::Family<prometheus::Counter>* denials_;
  std::array<prometheus::Counter*, 6> mutation_counters_{};                                      // by Mutation
  std::map<std::string, prometheus::Counter*, std::less<>> denial_counters_ GUARDED_BY(mutex_);  // by rule
  prometheus::Counter* warnings_;
  prometheus::Counter* cert_reads_;
  prometheus::Counter* cert_read_errors_;
  prometheus::Gauge* cert_expiration_;
  prometheus::Counter* lookups_ok_;
  prometheus::Counter* lookups_failed_;
  prometheus::Counter* connections_cut_;
  prometheus::Counter* connections_shed_;
  prometheus::Counter* connections_refused_;
  prometheus::Counter* busy_polls_;
  prometheus::Gauge* connections_open_;
  std::map<std::string, prometheus::Gauge*, std::less<>> audit_findings_;  // by rule; fixed by EnableAudit
  prometheus::Gauge* audit_extra_heads_ = nullptr;
  prometheus::Gauge* audit_last_success_ = nullptr;
  prometheus::Counter* audit_failures_ = nullptr;
  prometheus::Family<prometheus::Gauge>* release_info_;
  prometheus::Gauge* release_in_force_ GUARDED_BY(mutex_) = nullptr;
  prometheus::Family<prometheus::Counter>* watch_problems_;
  std::map<std::string, prometheus::Counter*, std::less<>> watch_problem_counters_ GUARDED_BY(mutex_);
  Mutex mutex_;  // serialises adding label values, which are added lazily
  PerWebhook mutate_;
  PerWebhook validate_;
  PerWebhook admit_;
};

}  // namespace ray_webhook
