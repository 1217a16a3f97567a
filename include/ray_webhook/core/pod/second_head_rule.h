// SecondHeadRule: deny a head Pod when its RayCluster already has a live one.
//
// Contract: pure; judges the head Pods the edge listed from the Kubernetes
// API (KubeApiClient::ListHeadPods). Live means no deletionTimestamp and a
// phase other than Succeeded or Failed; the Pod under review itself (same
// name) is not counted. A live head under another name is a 409 Conflict
// naming it and its phase. A lookup that failed is PodPolicy's to weigh
// (--head-lookup-failure); this rule only words it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ray_webhook/core/model/decision.h"
#include "ray_webhook/core/model/head_pods.h"
#include "ray_webhook/core/pod/ray_pod.h"

namespace ray_webhook {

inline constexpr std::string_view kSecondHeadRule = "second-head";

std::optional<Denial> CheckSecondHead(const std::vector<HeadPod>& heads, std::string_view own_name,
                                      const RayPodIdentity& identity);

// Why the rule could not judge: one line for a warning or a denial.
std::string SecondHeadLookupFailure(const RayPodIdentity& identity, const Status& lookup);

}  // namespace ray_webhook
