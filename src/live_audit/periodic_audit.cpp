#include "ray_webhook/live_audit/periodic_audit.h"

#include <spdlog/spdlog.h>

namespace ray_webhook {

PeriodicAudit::PeriodicAudit(KubeApiClient& client, std::function<PolicyConfig()> policy,
                             std::chrono::milliseconds interval, AuditGauges& gauges, std::optional<ReportApi> reports,
                             CostLeakLimits limits)
    : client_(client), policy_(std::move(policy)), interval_(interval), gauges_(gauges) {
  scope_.cost_leak_limits = limits;
  if (reports) reports_.emplace(client_, *reports);
}

PeriodicAudit::~PeriodicAudit() { Stop(); }

void PeriodicAudit::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { Run(); });
}

void PeriodicAudit::Stop() {
  {
    MutexLock lock(&mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void PeriodicAudit::Run() {
  for (;;) {
    AuditOnce();
    const auto until = std::chrono::steady_clock::now() + interval_;
    MutexLock lock(&mutex_);
    while (!stopping_ && lock.WaitUntil(wake_, until) == std::cv_status::no_timeout) {
    }
    if (stopping_) return;
  }
}

void PeriodicAudit::AuditOnce() {
  const auto start = std::chrono::steady_clock::now();
  Result<AuditReport> report = AuditCluster(client_, scope_, policy_(), [this] { return stopping_.load(); });
  if (stopping_) return;
  if (!report.ok()) {
    gauges_.CountAuditFailure();
    if (report.error() != last_error_) {
      spdlog::warn("audit of the cluster failed, the audit gauges keep the last result: {}", report.error());
      last_error_ = report.error();
    }
    return;
  }
  last_error_.clear();
  const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  gauges_.SetAuditResult(*report, now);
  std::string by_rule;
  for (const auto& [rule, count] : report->findings_by_rule) {
    by_rule += (by_rule.empty() ? "" : ",") + rule + "=" + std::to_string(count);
  }
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  spdlog::info(
      "audit pods={} rayclusters={} rayjobs={} rayservices={} raycronjobs={} findings={} by_rule={} extra_heads={} "
      "took={}ms",
      report->pods, report->ray_clusters, report->ray_jobs, report->ray_services, report->ray_cron_jobs,
      report->total_findings(), by_rule.empty() ? "none" : by_rule, report->clusters_with_extra_heads, took.count());
  for (const std::string& note : report->notes) spdlog::info("audit: {}", note);
  if (!reports_) return;
  Result<ReportWriter::Written> written = reports_->Write(*report, static_cast<std::int64_t>(now));
  if (!written.ok()) {
    if (written.error() != last_report_error_) {
      spdlog::warn("audit: the policy reports were not written, the next run tries again: {}", written.error());
      last_report_error_ = written.error();
    }
    return;
  }
  if (!last_report_error_.empty() || written->applied > 0 || written->deleted > 0) {
    spdlog::info("audit reports applied={} deleted={}", written->applied, written->deleted);
  }
  last_report_error_.clear();
}

}  // namespace ray_webhook
