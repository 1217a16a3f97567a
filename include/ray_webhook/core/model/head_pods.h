// HeadPod and HeadPodList: the one fact from the cluster that the core judges,
// the head Pods a RayCluster already has.
//
// Contract: plain data. The edge fills a HeadPodList from the Kubernetes API
// (KubeApiClient::ListHeadPods), or an error saying why it could not; the
// core (SecondHeadRule) only reads it. IsLiveHead is the one definition of
// a live head, shared by the second-head rule and the audit's extra-head rule.
#pragma once

#include <string>
#include <vector>

#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

struct HeadPod {
  std::string name;
  std::string phase;         // status.phase; may be empty
  bool terminating = false;  // metadata.deletionTimestamp is set
};

using HeadPodList = Result<std::vector<HeadPod>>;

// Live: not terminating (no deletionTimestamp) and in a phase other than
// Succeeded or Failed; an unknown (empty) phase counts as live.
inline bool IsLiveHead(const HeadPod& pod) {
  return !pod.terminating && pod.phase != "Succeeded" && pod.phase != "Failed";
}

}  // namespace ray_webhook
