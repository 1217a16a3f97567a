#include "ray_webhook/operator_release/release_choice.h"

#include <optional>
#include <vector>

namespace ray_webhook {
namespace {

// The container's last --feature-gates, as Go's flag package reads it: "-"
// or "--", "=VALUE" or the next argument, up to "--". (The package also stops
// at the first argument that is no flag, but which arguments are the values
// of other flags, "--log-stdout-encoder json", only the operator knows.)
struct GatesArg {
  bool given = false;
  bool has_value = false;  // "--feature-gates" last, with nothing after it: the operator exits at start
  std::string value;
};

GatesArg FeatureGatesArg(const std::vector<std::string>& args) {
  GatesArg out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (arg == "--") break;
    if (!arg.starts_with("-")) continue;
    arg.remove_prefix(arg.starts_with("--") ? 2 : 1);
    if (arg == "feature-gates") {
      out.given = true;
      out.has_value = i + 1 < args.size();
      out.value = out.has_value ? args[i + 1] : std::string();
      ++i;
    } else if (arg.starts_with("feature-gates=")) {
      out.given = out.has_value = true;
      out.value = std::string(arg.substr(14));
    }
  }
  return out;
}

struct Read {
  std::optional<KubeRayVersion> version;
  std::map<std::string, bool, std::less<>> gates;
  ReleaseSource problem = ReleaseSource::kOperator;
  std::string why;
};

Read ReadRelease(const OperatorDeployment& d) {
  Read r;
  r.version = ParseKubeRayVersion(d.image_tag);
  if (!r.version) {
    r.problem = ReleaseSource::kNotARelease;
    r.why = "Deployment " + d.Id() + " runs image \"" + d.image + "\", whose tag names no KubeRay release";
    return r;
  }
  if (!d.version_label.empty()) {
    const auto labelled = ParseKubeRayVersion(d.version_label);
    if (labelled && *labelled != *r.version) {
      r.problem = ReleaseSource::kAmbiguous;
      r.why = "Deployment " + d.Id() + " runs image tag " + d.image_tag +
              " but is labelled app.kubernetes.io/version=" + d.version_label;
      return r;
    }
  }
  const GatesArg gates = FeatureGatesArg(d.args);
  if (!gates.given) return r;
  Status parsed = gates.has_value ? ParseFeatureGates(gates.value, &r.gates)
                                  : Status::Error("the flag has no value, and the operator does not start");
  if (!parsed.ok()) {
    r.problem = ReleaseSource::kBadFeatureGates;
    r.why = "Deployment " + d.Id() + " has --feature-gates \"" + gates.value + "\": " + parsed.message();
  }
  return r;
}

std::string ShowGates(const std::map<std::string, bool, std::less<>>& gates) {
  std::string out;
  for (const auto& [name, on] : gates) out += (out.empty() ? "" : ",") + name + (on ? "=true" : "=false");
  return out;
}

ReleaseChoice Fallback(const KubeRayTarget& fixed, ReleaseSource source, const std::string& why) {
  ReleaseChoice choice;
  choice.target = fixed;
  choice.source = source;
  choice.detail = why + "; judging by the fixed release " + ShowKubeRayVersion(fixed.version);
  return choice;
}

}  // namespace

std::string_view ReleaseSourceName(ReleaseSource source) {
  switch (source) {
    case ReleaseSource::kOperator: return "operator";
    case ReleaseSource::kNotListedYet: return "not_listed_yet";
    case ReleaseSource::kNoOperator: return "no_operator";
    case ReleaseSource::kAmbiguous: return "ambiguous";
    case ReleaseSource::kNotARelease: return "not_a_release";
    case ReleaseSource::kBadFeatureGates: return "bad_feature_gates";
  }
  return "unknown";
}

ReleaseChoice NotListedYet(const KubeRayTarget& fixed) {
  return Fallback(fixed, ReleaseSource::kNotListedYet, "the KubeRay operator's Deployments are not listed yet");
}

ReleaseChoice ChooseKubeRayRelease(std::span<const OperatorDeployment> deployments, const KubeRayTarget& fixed) {
  const OperatorDeployment* first = nullptr;
  Read chosen;
  for (const OperatorDeployment& d : deployments) {
    if (!d.has_operator_container || d.replicas == 0) continue;
    Read r = ReadRelease(d);
    if (r.problem != ReleaseSource::kOperator) return Fallback(fixed, r.problem, r.why);
    if (first == nullptr) {
      first = &d;
      chosen = std::move(r);
    } else if (*r.version != *chosen.version || r.gates != chosen.gates) {
      return Fallback(fixed, ReleaseSource::kAmbiguous,
                      "two KubeRay operators disagree: Deployment " + first->Id() + " runs " +
                          ShowKubeRayVersion(*chosen.version) + " [" + ShowGates(chosen.gates) + "], " + d.Id() +
                          " runs " + ShowKubeRayVersion(*r.version) + " [" + ShowGates(r.gates) + "]");
    }
  }
  if (first == nullptr) return Fallback(fixed, ReleaseSource::kNoOperator, "no KubeRay operator Deployment found");
  ReleaseChoice choice;
  choice.source = ReleaseSource::kOperator;
  choice.target.version = *chosen.version;
  choice.target.feature_gates = std::move(chosen.gates);
  for (const auto& [name, on] : fixed.feature_gates) choice.target.feature_gates[name] = on;
  choice.detail = "KubeRay " + ShowKubeRayVersion(choice.target.version) + " from Deployment " + first->Id() +
                  " (image " + first->image + ")";
  if (!choice.target.feature_gates.empty())
    choice.detail += ", feature gates " + ShowGates(choice.target.feature_gates);
  return choice;
}

}  // namespace ray_webhook
