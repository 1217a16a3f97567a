// The tables of KubeRay's spec checks, one per kind of object they read.
//
// Contract: each returns its rules in the order KubeRay's validation.go runs
// them; ids are unique across all four tables (a test checks it). The tables
// are static data: reading them allocates nothing.
#pragma once

#include <span>

#include "ray_webhook/core/spec/spec_rule.h"

namespace ray_webhook {

// ValidateRayClusterMetadata, ValidateRayClusterSpec and their helpers (GCS
// fault tolerance, TLS, network policy, collectors, upgrade options).
std::span<const SpecRule> RayClusterSpecRules();
// ValidateRayJobSpec (and ValidateRayJobMetadata).
std::span<const SpecRule> RayJobSpecRules();
// ValidateRayServiceSpec (and ValidateRayServiceMetadata).
std::span<const SpecRule> RayServiceSpecRules();
// ValidateRayCronJobSpec.
std::span<const SpecRule> RayCronJobSpecRules();

}  // namespace ray_webhook
