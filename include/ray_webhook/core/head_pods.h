// HeadPod and HeadPodList: the one fact from the cluster that the core judges,
// the head Pods a RayCluster already has.
//
// Contract: plain data. The edge fills a HeadPodList from the Kubernetes API
// (KubeApiClient::ListHeadPods), or an error saying why it could not; the
// core (SecondHeadRule) only reads it.
#pragma once

#include <string>
#include <vector>

#include "ray_webhook/core/status.h"

namespace ray_webhook {

struct HeadPod {
  std::string name;
  std::string phase;         // status.phase; may be empty
  bool terminating = false;  // metadata.deletionTimestamp is set
};

using HeadPodList = Result<std::vector<HeadPod>>;

}  // namespace ray_webhook
