#include "spec_flags.h"

#include "flag_values.h"
#include "ray_webhook/core/spec/spec_rule_ids.h"

namespace ray_webhook {
namespace {

constexpr std::string_view kSpecSharedFlags[] = {"--kuberay-version", "--kuberay-feature-gates", "--spec-rule-mode",
                                                 "--spec-rule"};

}  // namespace

bool ParseRuleMode(std::string_view text, RuleMode* out) {
  if (text == "enforce") {
    *out = RuleMode::kEnforce;
  } else if (text == "warn") {
    *out = RuleMode::kWarn;
  } else if (text == "off") {
    *out = RuleMode::kOff;
  } else {
    return false;
  }
  return true;
}

Status KubeRayVersionFlag(std::string_view value, PolicyConfig& policy, bool* follow) {
  if (value == "auto" || value.starts_with("auto:")) {
    if (follow == nullptr) {
      return Status::Error(
          "--kuberay-version auto reads the operator's Deployment while serving; give a release, "
          "such as 1.6.2");
    }
    *follow = true;
    if (value == "auto") return Status::Ok();
    value.remove_prefix(5);
  } else if (follow != nullptr) {
    *follow = false;
  }
  const auto version = ParseKubeRayVersion(value);
  if (!version) {
    return Status::Error("--kuberay-version must be the KubeRay operator's release, such as 1.6.2 or v1.7.0" +
                         std::string(follow != nullptr ? ", or auto or auto:1.6.2" : "") + "; got " + Got(value));
  }
  policy.kuberay.version = *version;
  return Status::Ok();
}

Status KubeRayFeatureGatesFlag(std::string_view value, PolicyConfig& policy) {
  // Parsed aside, so that a bad list changes nothing.
  std::map<std::string, bool, std::less<>> gates = policy.kuberay.feature_gates;
  if (Status parsed = ParseFeatureGates(value, &gates); !parsed.ok()) {
    return Status::Error("--kuberay-feature-gates: " + parsed.message());
  }
  policy.kuberay.feature_gates = std::move(gates);
  return Status::Ok();
}

Status SpecRuleModeFlag(std::string_view value, PolicyConfig& policy) {
  RuleMode mode;
  if (!ParseRuleMode(value, &mode)) {
    return Status::Error("--spec-rule-mode must be enforce, warn or off; got " + Got(value));
  }
  policy.spec_mode = mode;
  return Status::Ok();
}

Status SpecRuleFlag(std::string_view value, PolicyConfig& policy) {
  const std::size_t eq = value.find('=');
  if (eq == std::string_view::npos) return Status::Error("--spec-rule must be ID=MODE; got " + Got(value));
  const std::string_view id = value.substr(0, eq);
  RuleMode mode;
  if (!ParseRuleMode(value.substr(eq + 1), &mode)) {
    return Status::Error("--spec-rule " + std::string(id) + ": the mode must be enforce, warn or off; got " +
                         Got(value.substr(eq + 1)));
  }
  if (!IsSpecRuleId(id)) {
    return Status::Error("--spec-rule: no spec rule " + Got(id) + " (see docs/rules.md)");
  }
  policy.spec_rule_modes[std::string(id)] = mode;
  return Status::Ok();
}

std::span<const std::string_view> SpecSharedFlags() { return kSpecSharedFlags; }

}  // namespace ray_webhook
