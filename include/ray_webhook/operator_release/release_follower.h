// ReleaseFollower: `--kuberay-version auto` while serving: which KubeRay
// release and feature gates the cluster's operator runs, followed as it changes.
//
// Contract: on a thread of its own (Start, Stop), lists and then watches
// (ListWatch) the Deployments matching the selector, in one namespace or in
// all, and keeps of each only what OperatorDeployment reads. After each
// complete list and each event it chooses the release (ChooseKubeRayRelease)
// and, when the choice differs from the last, tells the observer, which puts
// it in force, and logs it once. A Deployment whose text cannot be read is
// left out of the choice and logged once per reason; it is counted. The
// watch's own problems are ListWatch's: counted, told to the observer,
// logged once per kind, retried with backoff. Until the first list is
// complete the choice is NotListedYet, the fixed release. Reviews never wait
// on any of it. Choice() may be read from any thread.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "ray_webhook/kube/kube_api_client.h"
#include "ray_webhook/kube/list_watch.h"
#include "ray_webhook/mutex.h"
#include "ray_webhook/operator_release/release_choice.h"
#include "ray_webhook/thread_annotations.h"

namespace ray_webhook {

// The Helm chart's operator is app.kubernetes.io/name=kuberay-operator, the
// kustomize manifests' app.kubernetes.io/name=kuberay (KubeRay v1.6.2).
inline constexpr std::string_view kOperatorSelector = "app.kubernetes.io/name in (kuberay-operator,kuberay)";

struct ReleaseFollowerOptions {
  std::string namespace_name;  // empty: every namespace
  std::string label_selector{kOperatorSelector};
  ListWatchOptions watch;  // collection_path and label_selector are set from the two above
};

class ReleaseObserver {
 public:
  virtual ~ReleaseObserver() = default;
  virtual void ReleaseChosen(const ReleaseChoice& choice) = 0;
  virtual void WatchProblem(std::string_view resource, std::string_view problem) = 0;
};

class ReleaseFollower final : public WatchSink {
 public:
  ReleaseFollower(KubeApiClient& client, ReleaseFollowerOptions options, KubeRayTarget fixed,
                  ReleaseObserver& observer);
  ~ReleaseFollower() override;
  ReleaseFollower(const ReleaseFollower&) = delete;
  ReleaseFollower& operator=(const ReleaseFollower&) = delete;

  void Start();
  void Stop();
  ReleaseChoice Choice() const;
  ListWatchStats WatchStats() const;

  // WatchSink, called on the follower's thread.
  void OnListBegin() override;
  void OnListed(std::string_view object) override;
  void OnListEnd(std::string_view resource_version) override;
  void OnEvent(WatchEventType type, std::string_view object) override;
  void OnProblem(ListWatchProblem problem, std::string_view reason, bool first) override;

 private:
  void Keep(std::string_view object, std::map<std::string, OperatorDeployment>& into);
  void Choose();

  const KubeRayTarget fixed_;
  ReleaseObserver& observer_;
  std::unique_ptr<ListWatch> watch_;
  std::map<std::string, OperatorDeployment> deployments_;  // by namespace/name; the thread's own
  std::map<std::string, OperatorDeployment> listing_;      // a list in progress
  bool listed_ = false;
  std::string last_unreadable_;
  mutable Mutex mutex_;
  ReleaseChoice choice_ GUARDED_BY(mutex_);
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace ray_webhook
