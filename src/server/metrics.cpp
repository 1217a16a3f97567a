#include "ray_webhook/server/metrics.h"

#include <prometheus/text_serializer.h>

#include <algorithm>
#include <limits>
#include <sstream>

namespace ray_webhook {
namespace {

// controller-runtime uses Prometheus' default buckets; the finer ones below
// them resolve a webhook that answers in microseconds.
constexpr std::array<double, 16> kLatencyBuckets = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                                    0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};

constexpr int kCommonCodes[] = {200, 400, 404, 405, 413, 415, 500};

}  // namespace

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {
  requests_ = &prometheus::BuildCounter()
                   .Name("controller_runtime_webhook_requests_total")
                   .Help("Total number of admission requests by HTTP status code.")
                   .Register(*registry_);
  in_flight_ = &prometheus::BuildGauge()
                    .Name("controller_runtime_webhook_requests_in_flight")
                    .Help("Current number of admission requests being served.")
                    .Register(*registry_);
  mutations_ = &prometheus::BuildCounter()
                    .Name("ray_webhook_mutations_total")
                    .Help("Changes made to Ray Pods, by kind of change.")
                    .Register(*registry_);
  denials_ = &prometheus::BuildCounter()
                  .Name("ray_webhook_denials_total")
                  .Help("Admission requests denied, by rule.")
                  .Register(*registry_);
  warnings_ = &prometheus::BuildCounter()
                   .Name("ray_webhook_warnings_total")
                   .Help("Admission warnings returned.")
                   .Register(*registry_)
                   .Add({});
  cert_reads_ = &prometheus::BuildCounter()
                     .Name("certwatcher_read_certificate_total")
                     .Help("Total number of certificate reads")
                     .Register(*registry_)
                     .Add({});
  cert_read_errors_ = &prometheus::BuildCounter()
                           .Name("certwatcher_read_certificate_errors_total")
                           .Help("Total number of certificate read errors")
                           .Register(*registry_)
                           .Add({});
  cert_expiration_ = &prometheus::BuildGauge()
                          .Name("ray_webhook_serving_certificate_expiration_timestamp_seconds")
                          .Help("When the serving certificate in service expires (its notAfter), in Unix time.")
                          .Register(*registry_)
                          .Add({});
  auto& lookups = prometheus::BuildCounter()
                      .Name("ray_webhook_head_lookups_total")
                      .Help("Second-head lookups against the Kubernetes API, by result.")
                      .Register(*registry_);
  lookups_ok_ = &lookups.Add({{"result", "ok"}});
  lookups_failed_ = &lookups.Add({{"result", "error"}});
  connections_cut_ = &prometheus::BuildCounter()
                          .Name("ray_webhook_connections_cut_total")
                          .Help("Connections closed because their TLS handshake or a request ran past its deadline.")
                          .Register(*registry_)
                          .Add({});
  connections_shed_ = &prometheus::BuildCounter()
                           .Name("ray_webhook_connections_shed_total")
                           .Help("Idle connections closed to make room for a new one at --max-connections.")
                           .Register(*registry_)
                           .Add({});
  connections_refused_ = &prometheus::BuildCounter()
                              .Name("ray_webhook_connections_refused_total")
                              .Help("New connections closed at once: --max-connections were open and none idle.")
                              .Register(*registry_)
                              .Add({});
  busy_polls_ = &prometheus::BuildCounter()
                     .Name("ray_webhook_busy_polls_total")
                     .Help("Times an event loop polled for the next request instead of sleeping (--busy-poll).")
                     .Register(*registry_)
                     .Add({});
  release_info_ = &prometheus::BuildGauge()
                       .Name("ray_webhook_kuberay_release_info")
                       .Help(
                           "The KubeRay release whose spec checks run (1), and where it came from: the "
                           "operator's Deployment, or why the fixed release (--kuberay-version auto).")
                       .Register(*registry_);
  watch_problems_ = &prometheus::BuildCounter()
                         .Name("ray_webhook_watch_problems_total")
                         .Help("Problems of the Kubernetes API lists and watches, by resource and kind of problem.")
                         .Register(*registry_);
  connections_open_ = &prometheus::BuildGauge()
                           .Name("ray_webhook_connections_open")
                           .Help("Connections open, on the webhook and probe ports.")
                           .Register(*registry_)
                           .Add({});
  for (Mutation m : {Mutation::kFqRayIpAdded, Mutation::kRayIpAdded, Mutation::kAddressRewritten,
                     Mutation::kRayAddressRewritten, Mutation::kHeadNamed, Mutation::kGeneratedStartCommandRewritten}) {
    mutation_counters_.at(static_cast<std::size_t>(m)) = &mutations_->Add({{"kind", std::string(MutationName(m))}});
  }
  for (const char* rule : {"duplicate-mount", "head-name", "second-head"}) {
    denial_counters_[rule] = &denials_->Add({{"rule", rule}});
  }
  for (auto [w, name] :
       {std::pair{&mutate_, "/mutate"}, std::pair{&validate_, "/validate"}, std::pair{&admit_, "/admit"}}) {
    w->in_flight = &in_flight_->Add({{"webhook", name}});
    for (int code : kCommonCodes)
      w->by_code[code] = &requests_->Add({{"webhook", name}, {"code", std::to_string(code)}});
  }
}

Metrics::PerWebhook& Metrics::For(std::string_view webhook) {
  return webhook == "/mutate" ? mutate_ : webhook == "/admit" ? admit_ : validate_;
}

prometheus::Counter& Metrics::Code(PerWebhook& w, std::string_view webhook, int code) {
  if (code < 0 || code >= static_cast<int>(w.by_code.size())) code = 500;
  if (prometheus::Counter* c = w.by_code[code].load(std::memory_order_acquire)) return *c;
  MutexLock lock(&mutex_);
  auto& c = requests_->Add({{"webhook", std::string(webhook)}, {"code", std::to_string(code)}});
  w.by_code[code].store(&c, std::memory_order_release);
  return c;
}

void Metrics::RequestStarted(std::string_view webhook) { For(webhook).in_flight->Increment(); }

void Metrics::RequestFinished(std::string_view webhook, int http_code, double seconds) {
  PerWebhook& w = For(webhook);
  w.in_flight->Decrement();
  const auto bucket = static_cast<std::size_t>(
      std::lower_bound(kLatencyBuckets.begin(), kLatencyBuckets.end(), seconds) - kLatencyBuckets.begin());
  w.latency.counts[bucket].fetch_add(1, std::memory_order_relaxed);
  w.latency.sum_ns.fetch_add(static_cast<std::uint64_t>(seconds * 1e9), std::memory_order_relaxed);
  Code(w, webhook, http_code).Increment();
}

void Metrics::CountDecision(const Decision& decision) {
  for (Mutation m : decision.mutations) mutation_counters_.at(static_cast<std::size_t>(m))->Increment();
  if (!decision.allowed) {
    MutexLock lock(&mutex_);  // denials are rare
    auto it = denial_counters_.find(decision.denial.rule);
    if (it == denial_counters_.end()) {
      it = denial_counters_.emplace(decision.denial.rule, &denials_->Add({{"rule", decision.denial.rule}})).first;
    }
    it->second->Increment();
  }
  if (!decision.warnings.empty()) warnings_->Increment(static_cast<double>(decision.warnings.size()));
}

void Metrics::CountCertificateRead(bool ok) {
  cert_reads_->Increment();
  if (!ok) cert_read_errors_->Increment();
}

void Metrics::SetCertificateExpiration(std::int64_t not_after) {
  cert_expiration_->Set(static_cast<double>(not_after));
}

void Metrics::CountHeadLookup(bool ok) { (ok ? lookups_ok_ : lookups_failed_)->Increment(); }

void Metrics::CountConnectionsCut(std::size_t n) { connections_cut_->Increment(static_cast<double>(n)); }

void Metrics::CountConnectionsShed(std::size_t n) { connections_shed_->Increment(static_cast<double>(n)); }

void Metrics::CountConnectionsRefused(std::size_t n) { connections_refused_->Increment(static_cast<double>(n)); }
void Metrics::CountBusyPolls(std::size_t n) { busy_polls_->Increment(static_cast<double>(n)); }

void Metrics::SetOpenConnections(std::size_t n) { connections_open_->Set(static_cast<double>(n)); }

void Metrics::SetKubeRayRelease(std::string_view version, std::string_view source) {
  MutexLock lock(&mutex_);
  if (release_in_force_ != nullptr) release_info_->Remove(release_in_force_);
  release_in_force_ = &release_info_->Add({{"version", std::string(version)}, {"source", std::string(source)}});
  release_in_force_->Set(1);
}

void Metrics::CountWatchProblem(std::string_view resource, std::string_view problem) {
  MutexLock lock(&mutex_);
  const std::string key = std::string(resource) + "/" + std::string(problem);
  auto it = watch_problem_counters_.find(key);
  if (it == watch_problem_counters_.end()) {
    prometheus::Counter* c =
        &watch_problems_->Add({{"resource", std::string(resource)}, {"problem", std::string(problem)}});
    it = watch_problem_counters_.emplace(key, c).first;
  }
  it->second->Increment();
}

void Metrics::EnableAudit() {
  auto& findings = prometheus::BuildGauge()
                       .Name("ray_webhook_audit_findings")
                       .Help("Findings of the last periodic audit of the cluster's Ray objects, by rule.")
                       .Register(*registry_);
  for (std::string_view rule : AuditRuleNames())
    audit_findings_[std::string(rule)] = &findings.Add({{"rule", std::string(rule)}});
  audit_extra_heads_ = &prometheus::BuildGauge()
                            .Name("ray_webhook_rayclusters_with_extra_heads")
                            .Help("RayClusters with more than one live head Pod at the last periodic audit.")
                            .Register(*registry_)
                            .Add({});
  audit_last_success_ = &prometheus::BuildGauge()
                             .Name("ray_webhook_audit_last_success_timestamp_seconds")
                             .Help("When the last periodic audit that read the whole cluster finished (Unix time).")
                             .Register(*registry_)
                             .Add({});
  audit_failures_ = &prometheus::BuildCounter()
                         .Name("ray_webhook_audit_failures_total")
                         .Help("Periodic audits that could not read the cluster (the gauges keep the last result).")
                         .Register(*registry_)
                         .Add({});
}

void Metrics::SetAuditResult(const AuditReport& report, double unix_seconds) {
  if (audit_extra_heads_ == nullptr) return;
  for (auto& [rule, gauge] : audit_findings_) {
    auto it = report.findings_by_rule.find(rule);
    gauge->Set(it == report.findings_by_rule.end() ? 0.0 : static_cast<double>(it->second));
  }
  audit_extra_heads_->Set(static_cast<double>(report.clusters_with_extra_heads));
  audit_last_success_->Set(unix_seconds);
}

void Metrics::CountAuditFailure() {
  if (audit_failures_ != nullptr) audit_failures_->Increment();
}

std::string Metrics::Render() const {
  auto families = registry_->Collect();
  prometheus::MetricFamily latency;
  latency.name = "controller_runtime_webhook_latency_seconds";
  latency.help = "Histogram of the latency of processing admission requests";
  latency.type = prometheus::MetricType::Histogram;
  for (auto [w, name] :
       {std::pair{&mutate_, "/mutate"}, std::pair{&validate_, "/validate"}, std::pair{&admit_, "/admit"}}) {
    prometheus::ClientMetric m;
    m.label.push_back({"webhook", name});
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i <= kBuckets; ++i) {
      cumulative += w->latency.counts[i].load(std::memory_order_relaxed);
      m.histogram.bucket.push_back(
          {cumulative, i < kBuckets ? kLatencyBuckets[i] : std::numeric_limits<double>::infinity()});
    }
    m.histogram.sample_count = cumulative;
    m.histogram.sample_sum = static_cast<double>(w->latency.sum_ns.load(std::memory_order_relaxed)) / 1e9;
    latency.metric.push_back(std::move(m));
  }
  families.push_back(std::move(latency));
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace ray_webhook
