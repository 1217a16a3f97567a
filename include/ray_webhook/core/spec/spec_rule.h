// SpecRule: one of KubeRay's own checks of a RayCluster, RayJob, RayService or
// RayCronJob spec, run at admission so `kubectl apply` refuses what the
// operator would refuse only later, in an Event.
//
// Contract: a rule is a row of data (its id, the kinds it reads, the KubeRay
// releases that check it, the feature gate it needs on or off, and where
// KubeRay checks it, as "file:line@tag") and a pure check over the object,
// read through spec_json's view of its one parse, that appends findings. A
// check never reads its mode, the version or the gates beyond SpecContext,
// and never throws: a field of an unexpected type is skipped, since the API
// server has already checked types against the CRD's schema. SpecValidation alone picks the rules that apply and turns
// findings into a denial or warnings.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "ray_webhook/core/model/kuberay_target.h"
#include "ray_webhook/core/model/ray_cluster_spec.h"

namespace ray_webhook {

namespace spec_json {
// The view of the object's parsed JSON the checks read (src/core/spec/spec_json.h):
// declared only, so that including a rule's row does not include the parser.
class Json;
}  // namespace spec_json

// Which kinds a rule reads. A RayCluster spec rule also runs on the cluster
// spec a RayJob (spec.rayClusterSpec) or RayService (spec.rayClusterConfig)
// or RayCronJob (spec.jobTemplate.rayClusterSpec) carries, as KubeRay's
// ValidateRayJobSpec and ValidateRayServiceSpec call ValidateRayClusterSpec.
enum SpecKinds : unsigned {
  kSpecRayCluster = 1u << 0,
  kSpecRayJob = 1u << 1,
  kSpecRayService = 1u << 2,
  kSpecRayCronJob = 1u << 3,
};

struct SpecContext {
  // The whole object (apiVersion, kind, metadata, spec), as stored.
  const spec_json::Json& object;
  RayObjectKind kind;
  // For a RayCluster spec rule: the cluster spec and its field path
  // ("spec", "spec.rayClusterSpec", ...); absent when the object carries none.
  const spec_json::Json& cluster_spec;
  std::string_view cluster_spec_path;
  const KubeRayTarget& target;
};

struct SpecFinding {
  std::string rule;
  // As kubectl names fields: "spec.workerGroupSpecs[1].minReplicas".
  std::string field_path;
  // KubeRay's reason, in words a user acts on, without the field path.
  std::string message;
  friend bool operator==(const SpecFinding&, const SpecFinding&) = default;
};

struct SpecRule {
  // Kebab case, unique: "worker-replicas-range". Named by --spec-rule.
  std::string_view id;
  unsigned kinds;
  // The releases that check it: [since, until); until {} means "still".
  KubeRayVersion since;
  KubeRayVersion until;
  // A feature gate the rule needs on ("RayClusterMTLS"), or off when the
  // name starts with '!'; empty for none.
  std::string_view gate;
  // Where KubeRay checks it: "ray-operator/controllers/ray/utils/validation.go:171@v1.7.0".
  std::string_view source;
  void (*check)(const SpecContext& ctx, std::vector<SpecFinding>& out);
};

}  // namespace ray_webhook
