// What the cost-leak rules read, from the values the core's decoders keep:
// times (RFC 3339, as the API server writes metav1.Time), quantities (as
// resources.requests spell them) and what a RayCluster's spec asks for.
//
// Contract: pure functions; a value that does not parse is nullopt, never an
// exception.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "ray_webhook/audit/cost_leaks.h"
#include "ray_webhook/core/model/ray_cluster_spec.h"

namespace ray_webhook {

// "2026-12-05T10:00:00Z", with optional fractional seconds and a "Z" or
// "+hh:mm"/"-hh:mm" offset ('t' and 'z' as well, as RFC 3339 allows), to Unix
// seconds (fractions dropped).
std::optional<std::int64_t> ParseRfc3339(std::string_view text);

// A Kubernetes quantity: "2", "500m", "1.5", "4k", "16Gi", "1e3"; suffixes
// m, k, M, G, T, P, E and Ki to Ei. Negative quantities are nullopt.
std::optional<double> ParseQuantity(std::string_view text);

// What the cluster asks for while every Pod runs: one head Pod (when the spec
// has a head group) and, per worker group, replicas (at least
// minReplicas; 0 when suspended) times numOfHosts. Each Pod's CPUs and GPUs (any
// resource named "<vendor>/gpu") are those its containers request, a limit
// standing for a missing request (Kubernetes defaults one from the other),
// or its largest init container's when that is more, as the scheduler counts.
ClusterRequests RequestsOf(const RayClusterSpecView& spec);

}  // namespace ray_webhook
