// SecondHeadRule: deny a head Pod when its RayCluster already has a live one.
//
// Contract: pure; judges the head Pods the edge listed from the Kubernetes
// API (KubeApiClient::ListHeadPods). Live means no deletionTimestamp and a
// phase other than Succeeded or Failed; the Pod under review itself (same
// name) is not counted. A live head under another name yields a 409 denial
// naming it and its phase. A failed lookup yields a warning, or a 503 denial
// when configured to deny.
#pragma once

#include <string_view>

#include "ray_webhook/config.h"
#include "ray_webhook/decision.h"
#include "ray_webhook/kube_api_client.h"
#include "ray_webhook/ray_pod.h"

namespace ray_webhook {

inline constexpr std::string_view kSecondHeadRule = "second-head";

bool IsLiveHead(const PodSummary& pod);

void JudgeSecondHead(const PodListResult& heads, std::string_view own_name, const RayPodIdentity& identity,
                     const Config& config, Decision& decision);

}  // namespace ray_webhook
