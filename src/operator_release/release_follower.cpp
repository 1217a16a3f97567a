#include "ray_webhook/operator_release/release_follower.h"

#include <spdlog/spdlog.h>

#include <vector>

namespace ray_webhook {
namespace {

ListWatchOptions WatchOptions(const ReleaseFollowerOptions& o) {
  ListWatchOptions w = o.watch;
  w.collection_path = o.namespace_name.empty() ? "/apis/apps/v1/deployments"
                                               : "/apis/apps/v1/namespaces/" + o.namespace_name + "/deployments";
  w.label_selector = o.label_selector;
  return w;
}

}  // namespace

ReleaseFollower::ReleaseFollower(KubeApiClient& client, ReleaseFollowerOptions options, KubeRayTarget fixed,
                                 ReleaseObserver& observer)
    : fixed_(std::move(fixed)),
      observer_(observer),
      watch_(std::make_unique<ListWatch>(client, WatchOptions(options), *this)),
      choice_(NotListedYet(fixed_)) {}

ReleaseFollower::~ReleaseFollower() { Stop(); }

void ReleaseFollower::Start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { watch_->Run([this] { return stopping_.load(); }); });
}

void ReleaseFollower::Stop() {
  stopping_ = true;
  if (thread_.joinable()) thread_.join();
}

ReleaseChoice ReleaseFollower::Choice() const {
  MutexLock lock(&mutex_);
  return choice_;
}

ListWatchStats ReleaseFollower::WatchStats() const { return watch_->stats(); }

void ReleaseFollower::OnListBegin() { listing_.clear(); }

void ReleaseFollower::OnListed(std::string_view object) { Keep(object, listing_); }

void ReleaseFollower::OnListEnd(std::string_view) {
  deployments_.swap(listing_);
  listing_.clear();
  listed_ = true;
  Choose();
}

void ReleaseFollower::OnEvent(WatchEventType type, std::string_view object) {
  if (type == WatchEventType::kDeleted) {
    Result<OperatorDeployment> gone = ReadOperatorDeployment(object);
    if (gone.ok()) deployments_.erase(gone->Id());
  } else {
    Keep(object, deployments_);
  }
  if (listed_) Choose();
}

void ReleaseFollower::OnProblem(ListWatchProblem problem, std::string_view reason, bool first) {
  observer_.WatchProblem("deployments", ProblemName(problem));
  if (first) spdlog::warn("kuberay release: watching the operator's Deployments: {}", reason);
}

void ReleaseFollower::Keep(std::string_view object, std::map<std::string, OperatorDeployment>& into) {
  Result<OperatorDeployment> read = ReadOperatorDeployment(object);
  if (!read.ok()) {
    observer_.WatchProblem("deployments", "unreadable_object");
    if (read.error() != last_unreadable_) {
      spdlog::warn("kuberay release: a Deployment that cannot be read is left out: {}", read.error());
      last_unreadable_ = read.error();
    }
    return;
  }
  // Only what the choice reads is kept; a Deployment of another program is not kept at all.
  if (!read->has_operator_container) {
    into.erase(read->Id());
    return;
  }
  std::string id = read->Id();
  into.insert_or_assign(std::move(id), std::move(*read));
}

void ReleaseFollower::Choose() {
  std::vector<OperatorDeployment> found;
  found.reserve(deployments_.size());
  for (const auto& [id, d] : deployments_) found.push_back(d);
  ReleaseChoice next = ChooseKubeRayRelease(found, fixed_);
  {
    MutexLock lock(&mutex_);
    if (next.source == choice_.source && next.detail == choice_.detail) return;
  }
  if (next.from_operator()) {
    spdlog::info("kuberay release: {}", next.detail);
  } else {
    spdlog::warn("kuberay release: {} ({})", next.detail, ReleaseSourceName(next.source));
  }
  // In force first, then shown: whoever reads the choice (/readyz) finds it judging already.
  observer_.ReleaseChosen(next);
  MutexLock lock(&mutex_);
  choice_ = std::move(next);
}

}  // namespace ray_webhook
