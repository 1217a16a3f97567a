// ChooseKubeRayRelease: `--kuberay-version auto`, the release and feature
// gates whose spec checks run, from the KubeRay operators' Deployments.
//
// Contract: pure. A Deployment that runs nothing (replicas 0) or holds no
// operator container is not counted. Each other one gives its release from
// its image tag ("v1.6.2" or "1.6.2"), and its gates from its container's
// last --feature-gates (Go's flag package: "-" or "--", "=V" or the next
// argument; the last one wins). When every counted Deployment gives the same
// release and gates, that is the choice. Otherwise the choice is `fixed`
// (the flag's release), with the reason: none counted, two that disagree,
// a tag that is no release (a digest alone, "latest", a build of one's
// own), an app.kubernetes.io/version label that contradicts the tag, or
// feature gates that do not parse. So an ambiguous cluster is judged by
// exactly the rules of the fixed release, never more. Gates named on
// ray-webhook's own command line (fixed.feature_gates) win over the
// operator's in every case.
#pragma once

#include <span>
#include <string>

#include "ray_webhook/core/model/kuberay_target.h"
#include "ray_webhook/operator_release/operator_deployment.h"

namespace ray_webhook {

enum class ReleaseSource {
  kOperator,        // read from the operator's Deployment
  kNotListedYet,    // the Deployments have not been listed yet
  kNoOperator,      // no operator Deployment found
  kAmbiguous,       // operators of different releases or gates, or a label that contradicts the tag
  kNotARelease,     // an image tag that names no release
  kBadFeatureGates  // --feature-gates that do not parse
};
std::string_view ReleaseSourceName(ReleaseSource source);  // "operator", "no_operator", ...: metrics and logs

struct ReleaseChoice {
  KubeRayTarget target;
  ReleaseSource source = ReleaseSource::kNotListedYet;
  // One line, for the log, /readyz and `ray-webhook audit`: what was found and why this release.
  std::string detail;

  bool from_operator() const { return source == ReleaseSource::kOperator; }
};

ReleaseChoice ChooseKubeRayRelease(std::span<const OperatorDeployment> deployments, const KubeRayTarget& fixed);

// The choice before any Deployment was read.
ReleaseChoice NotListedYet(const KubeRayTarget& fixed);

}  // namespace ray_webhook
