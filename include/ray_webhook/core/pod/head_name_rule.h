// HeadNameRule: one deterministic name per RayCluster head.
//
// Contract: pure. PlanHeadName (mutating) names a head Pod that came with
// generateName only: metadata.name = DeterministicHeadPodName and
// generateName removed, so a second head fails in kube-apiserver with a plain
// 409 AlreadyExists (mutating webhooks run before the API server generates
// names, and needsNameGeneration skips a Pod that has one). A named head is
// left alone. When Autoscaler v2 forbids a fixed name it adds a warning
// instead. CheckHeadName (validating) returns a denial for a head whose name
// is not the deterministic one, except under that Autoscaler v2 exception and
// when there is no name to judge yet.
#pragma once

#include <optional>
#include <string_view>

#include "ray_webhook/core/model/admission_request.h"
#include "ray_webhook/core/model/decision.h"
#include "ray_webhook/core/pod/ray_pod.h"

namespace ray_webhook {

inline constexpr std::string_view kHeadNameRule = "head-name";

void PlanHeadName(const Pod& pod, const RayPodIdentity& identity, Decision& decision);

std::optional<Denial> CheckHeadName(const Pod& pod, const RayPodIdentity& identity, std::string_view request_name);

}  // namespace ray_webhook
