// ObjectFindings: every per-object rule's finding for one Pod, RayCluster,
// RayJob or RayService, as an audit reports what already exists.
//
// Contract: pure, like PodPolicy, and over the same decoded request (the
// object wrapped as a CREATE). It runs the rules PodPolicy runs at /validate
// and /mutate, but returns each finding in full instead of deciding: no
// denial, no patch, no mode other than "off" (a rule whose mode is off, or
// whose head-uniqueness mechanism is off, reports nothing). For a Pod:
// duplicate-mount, head-name (a head not under its deterministic name),
// duplicate-env, and "unmutated", a Ray Pod the FQDN mutation would still
// change (the operations it would add). For a ray.io object: duplicate-mount
// over the Pods KubeRay would build, head-name (a cluster name too long for
// its head's name), bare-address, and KubeRay's spec checks that apply to
// PolicyConfig::kuberay, each under its rule id. The second-head rule needs the other
// Pods of the cluster and is not run here (the audit's extra-head rule).
#pragma once

#include <string>
#include <vector>

#include "ray_webhook/core/model/admission_request.h"
#include "ray_webhook/core/model/policy_config.h"

namespace ray_webhook {

inline constexpr std::string_view kUnmutatedRule = "unmutated";

struct RuleFinding {
  std::string rule;        // the rule's name, as metrics and warnings name it
  std::string field_path;  // "spec.workerGroupSpecs[1].template...", or empty when the finding is the whole object
  std::string message;     // the whole finding, with its likely cause
};

std::vector<RuleFinding> ObjectFindings(const AdmissionRequest& request, const PolicyConfig& policy);

}  // namespace ray_webhook
