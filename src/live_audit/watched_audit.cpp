#include "ray_webhook/live_audit/watched_audit.h"

#include <malloc.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "ray_webhook/audit/cluster_view.h"
#include "ray_webhook/live_audit/cluster_audit.h"
#include "ray_webhook/live_audit/report_writer.h"
#include "ray_webhook/mutex.h"
#include "ray_webhook/thread_annotations.h"

namespace ray_webhook {
namespace {

using SteadyClock = std::chrono::steady_clock;
using std::chrono::milliseconds;

struct Collection {
  AuditedKind kind;
  std::string_view path;  // every namespace
  std::string_view resource;
  std::string_view selector;
};

constexpr std::array<Collection, 5> kCollections = {{
    {AuditedKind::kPod, "/api/v1/pods", "pods", kRayPodSelector},
    {AuditedKind::kRayCluster, "/apis/ray.io/v1/rayclusters", "rayclusters", ""},
    {AuditedKind::kRayJob, "/apis/ray.io/v1/rayjobs", "rayjobs", ""},
    {AuditedKind::kRayService, "/apis/ray.io/v1/rayservices", "rayservices", ""},
    // v1.7 and later; an older operator has no such resource.
    {AuditedKind::kRayCronJob, "/apis/ray.io/v1/raycronjobs", "raycronjobs", ""},
}};

std::int64_t UnixNow() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string ByRule(const AuditReport& report) {
  std::string out;
  for (const auto& [rule, count] : report.findings_by_rule) {
    out += (out.empty() ? "" : ",") + rule + "=" + std::to_string(count);
  }
  return out.empty() ? "none" : out;
}

}  // namespace

struct WatchedAudit::Impl {
  Impl(KubeApiClient& c, std::function<const PolicyConfig*()> p, AuditGauges& g, WatchedAuditOptions o)
      : client(c), policy(std::move(p)), gauges(g), options(std::move(o)) {
    if (options.reports) reports.emplace(client, *options.reports);
  }

  // What one collection's ListWatch hands on, into the shared view.
  class Sink final : public WatchSink {
   public:
    Sink(Impl& impl, const Collection& c) : impl_(impl), collection_(c), source_("API " + std::string(c.resource)) {}

    void OnListBegin() override {
      MutexLock lock(&impl_.mutex);
      epoch_ = impl_.epoch;
      impl_.view->BeginResync(collection_.kind);
    }
    void OnListed(std::string_view object) override {
      MutexLock lock(&impl_.mutex);
      if (epoch_ == impl_.epoch) Keep(impl_.view->Upsert(collection_.kind, object, source_));
    }
    void OnListEnd(std::string_view) override { Listed(""); }
    void OnNotServed(std::string_view reason) override { Listed(reason); }
    void OnEvent(WatchEventType type, std::string_view object) override {
      MutexLock lock(&impl_.mutex);
      if (epoch_ != impl_.epoch) return;
      Keep(type == WatchEventType::kDeleted ? impl_.view->Remove(collection_.kind, object)
                                            : impl_.view->Upsert(collection_.kind, object, source_));
      impl_.Changed();
    }
    void OnProblem(ListWatchProblem problem, std::string_view reason, bool first) override {
      impl_.gauges.CountWatchProblem(collection_.resource, ProblemName(problem));
      // The cluster cannot be read (a list failed, a watch refused: RBAC without watch; no connection), as a
      // periodic run that failed; a watch the server ends, or one gone idle or expired, is followed by another.
      if (problem == ListWatchProblem::kListFailed || problem == ListWatchProblem::kWatchAnswered ||
          problem == ListWatchProblem::kWatchFailed) {
        impl_.gauges.CountAuditFailure();
      }
      if (first) {
        spdlog::warn("audit: {} {}: {} (logged once per kind; retried with backoff)", collection_.resource,
                     ProblemName(problem), reason);
      }
    }

   private:
    void Listed(std::string_view not_served) {
      MutexLock lock(&impl_.mutex);
      if (epoch_ != impl_.epoch) return;
      impl_.view->EndResync(collection_.kind);
      const std::size_t k = static_cast<std::size_t>(collection_.kind);
      if (!not_served.empty() && !impl_.not_served[k]) {
        spdlog::info("audit: {} not served by the Kubernetes API (its CustomResourceDefinition not installed?): {}",
                     collection_.resource, not_served);
      }
      impl_.not_served[k] = !not_served.empty();
      impl_.listed[k] = true;
      impl_.relisted = true;
      impl_.Changed();
    }

    void Keep(const Status& kept) REQUIRES(impl_.mutex) {
      if (kept.ok()) return;
      impl_.gauges.CountWatchProblem(collection_.resource, "unreadable_object");
      // Once per reason, its first line; the object stays out of the audit until it changes.
      const std::string reason = kept.message().substr(0, kept.message().find('\n'));
      if (impl_.unreadable_reasons.size() < 64 && impl_.unreadable_reasons.insert(reason).second) {
        spdlog::warn("audit: an object left out of the audit: {}", reason);
      }
    }

    Impl& impl_;
    const Collection& collection_;
    const std::string source_;
    std::uint64_t epoch_ = 0;  // the view this list fills; the collection's thread's own
  };

  void Changed() REQUIRES(mutex) {
    if (!dirty) dirty_since = SteadyClock::now();
    dirty = true;
    wake.notify_all();
  }

  bool AllListed() const REQUIRES(mutex) {
    return std::all_of(listed.begin(), listed.end(), [](bool b) { return b; });
  }

  void RunCollection(std::size_t k) {
    const Collection& c = kCollections[k];
    Sink sink(*this, c);
    ListWatchOptions o = options.watch;
    o.collection_path = std::string(c.path);
    o.label_selector = std::string(c.selector);
    while (!stopping) {
      std::uint64_t started_epoch = 0;
      {
        MutexLock lock(&mutex);
        started_epoch = epoch;
      }
      ListWatch watch(client, o, sink);
      // A new epoch (another policy in force) ends this watch: the next one lists into the new view.
      watch.Run([&] { return stopping.load() || epoch_seen.load() != started_epoch; });
    }
  }

  // A policy other than the view's: a new, empty view, filled by a list of every collection.
  void FollowPolicy() {
    const PolicyConfig* current = policy();
    MutexLock lock(&mutex);
    if (current == view_policy) return;
    if (view_policy != nullptr) spdlog::info("audit: the policy in force changed; listing the cluster again");
    view_policy = current;
    view = std::make_unique<ClusterView>(*current, options.cost_leak_limits);
    listed.fill(false);
    ++epoch;
    epoch_seen = epoch;
    dirty = false;
  }

  void Judge() {
    const auto started = SteadyClock::now();
    const std::int64_t now = UnixNow();
    ClusterView::Judgement judgement;
    std::size_t objects = 0;
    {
      MutexLock lock(&mutex);
      dirty = false;
      judgement = view->Judge(now);
      objects = view->objects();
    }
    last_judge_took = SteadyClock::now() - started;
    next_deadline = judgement.next_deadline;
    next_refresh = SteadyClock::now() + options.refresh;
    const AuditReport& report = judgement.report;
    gauges.SetAuditResult(report, static_cast<double>(now));
    const std::string by_rule = ByRule(report);
    if (!judged_once || by_rule != last_by_rule) {
      spdlog::info(
          "audit pods={} rayclusters={} rayjobs={} rayservices={} raycronjobs={} findings={} by_rule={} "
          "extra_heads={} objects_kept={} took={}ms",
          report.pods, report.ray_clusters, report.ray_jobs, report.ray_services, report.ray_cron_jobs,
          report.total_findings(), by_rule, report.clusters_with_extra_heads, objects,
          std::chrono::duration_cast<milliseconds>(last_judge_took).count());
      last_by_rule = by_rule;
    }
    judged_once = true;
    if (!reports) return;
    Result<ReportWriter::Written> written = reports->WriteChanges(report, now);
    if (!written.ok()) {
      retry_reports_at = SteadyClock::now() + options.settle + report_backoff;
      report_backoff = std::min<SteadyClock::duration>(report_backoff * 2, std::chrono::seconds(30));
      if (written.error() != last_report_error) {
        spdlog::warn("audit: the policy reports were not written, trying again: {}", written.error());
        last_report_error = written.error();
      }
      return;
    }
    retry_reports_at.reset();
    report_backoff = std::chrono::seconds(1);
    if (!last_report_error.empty() || written->applied > 0 || written->deleted > 0) {
      spdlog::info("audit reports applied={} deleted={}", written->applied, written->deleted);
    }
    last_report_error.clear();
  }

  // The next time to judge, with the view listed: after a change, when a rule comes due, a retry, a refresh.
  SteadyClock::time_point NextJudgement() REQUIRES(mutex) {
    SteadyClock::time_point next = next_refresh;
    if (dirty) {
      const auto gap = std::max<SteadyClock::duration>(options.settle, last_judge_took * 4);
      next = std::min(next, std::max(dirty_since + options.settle, last_judged + gap));
    }
    if (next_deadline) {
      const std::int64_t in = *next_deadline - UnixNow();
      next = std::min(next, SteadyClock::now() + std::chrono::seconds(std::max<std::int64_t>(in, 0)));
    }
    if (retry_reports_at) next = std::min(next, *retry_reports_at);
    return next;
  }

  void RunJudge() {
    while (!stopping) {
      FollowPolicy();
      bool judge = false, after_list = false;
      {
        MutexLock lock(&mutex);
        // A policy change is noticed within a second.
        SteadyClock::time_point until = SteadyClock::now() + std::chrono::seconds(1);
        if (AllListed()) {
          const SteadyClock::time_point next = NextJudgement();
          judge = next <= SteadyClock::now();
          until = std::min(until, next);
        }
        if (judge) std::swap(after_list, relisted);
        if (!judge && !stopping) lock.WaitUntil(wake, until);
      }
      if (judge && !stopping) {
        Judge();
        last_judged = SteadyClock::now();
        // A list's pages and parsers (tens of MB at 100,000 Pods) are freed when it ends, but glibc
        // keeps them in the listing threads' arenas: give them back once the view is judged.
        // Judgements in between reuse their own arena's memory.
        if (after_list) malloc_trim(0);
      }
    }
  }

  KubeApiClient& client;
  const std::function<const PolicyConfig*()> policy;
  AuditGauges& gauges;
  const WatchedAuditOptions options;
  std::optional<ReportWriter> reports;  // the judging thread's own

  Mutex mutex;
  std::condition_variable wake;
  std::unique_ptr<ClusterView> view GUARDED_BY(mutex);
  const PolicyConfig* view_policy GUARDED_BY(mutex) = nullptr;
  std::uint64_t epoch GUARDED_BY(mutex) = 0;
  std::atomic<std::uint64_t> epoch_seen{0};  // epoch, for the watches' stop checks
  std::array<bool, kCollections.size()> listed GUARDED_BY(mutex){};
  std::array<bool, kCollections.size()> not_served GUARDED_BY(mutex){};
  bool dirty GUARDED_BY(mutex) = false;
  bool relisted GUARDED_BY(mutex) = false;  // a list ended since the last judgement
  SteadyClock::time_point dirty_since GUARDED_BY(mutex);
  std::set<std::string> unreadable_reasons GUARDED_BY(mutex);
  std::atomic<bool> stopping{false};

  // The judging thread's own (NextJudgement reads them under the mutex, from that thread).
  SteadyClock::duration last_judge_took{};
  SteadyClock::time_point last_judged{};
  SteadyClock::time_point next_refresh{};
  std::optional<std::int64_t> next_deadline;
  std::optional<SteadyClock::time_point> retry_reports_at;
  SteadyClock::duration report_backoff{std::chrono::seconds(1)};
  std::string last_report_error, last_by_rule;
  bool judged_once = false;

  std::vector<std::thread> threads;
};

WatchedAudit::WatchedAudit(KubeApiClient& client, std::function<const PolicyConfig*()> policy, AuditGauges& gauges,
                           WatchedAuditOptions options)
    : impl_(std::make_unique<Impl>(client, std::move(policy), gauges, std::move(options))) {}

WatchedAudit::~WatchedAudit() { Stop(); }

void WatchedAudit::Start() {
  Impl& m = *impl_;
  if (!m.threads.empty()) return;
  m.FollowPolicy();  // the first view, before any list fills it
  for (std::size_t k = 0; k < kCollections.size(); ++k) m.threads.emplace_back([&m, k] { m.RunCollection(k); });
  m.threads.emplace_back([&m] { m.RunJudge(); });
}

void WatchedAudit::Stop() {
  Impl& m = *impl_;
  {
    MutexLock lock(&m.mutex);
    m.stopping = true;
  }
  m.wake.notify_all();
  for (std::thread& t : m.threads) t.join();
  m.threads.clear();
}

}  // namespace ray_webhook
