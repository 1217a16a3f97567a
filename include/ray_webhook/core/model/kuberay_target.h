// KubeRayTarget: which KubeRay operator the cluster runs, so the spec rules
// check what that release checks and nothing it does not.
//
// Contract: plain data in PolicyConfig. A version is major.minor.patch
// ("1.6.2", "v1.7.0"); feature gates are the operator's --feature-gates, and a
// gate the administrator did not name takes the default of that release
// (ray-operator/pkg/features/features.go at its tag). ParseKubeRayVersion and
// ParseFeatureGates never throw: they say what is wrong with their input.
#pragma once

#include <compare>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

struct KubeRayVersion {
  int major = 0;
  int minor = 0;
  int patch = 0;
  friend auto operator<=>(const KubeRayVersion&, const KubeRayVersion&) = default;
};

// "1.6.2" or "v1.6.2"; nullopt for anything else.
std::optional<KubeRayVersion> ParseKubeRayVersion(std::string_view text);
// "1.6.2".
std::string ShowKubeRayVersion(KubeRayVersion v);

struct KubeRayTarget {
  // The operator the end-to-end suite runs by default and the newest the Go
  // module proxy serves as a whole module.
  KubeRayVersion version{1, 6, 2};
  // The gates named on the command line: name -> enabled.
  std::map<std::string, bool, std::less<>> feature_gates;

  // Whether `gate` is on for this operator: as named, else the release's default.
  bool GateEnabled(std::string_view gate) const;
};

// "A=true,B=false" (the operator's own --feature-gates syntax) into out.
Status ParseFeatureGates(std::string_view text, std::map<std::string, bool, std::less<>>* out);

}  // namespace ray_webhook
