// The rows of RayServiceSpecRules(): ValidateRayServiceMetadata,
// validateInitializingTimeout, ValidateRayServiceSpec and
// ValidateClusterUpgradeOptions (ray-operator/controllers/ray/utils/validation.go),
// one SpecRule each.
//
// Not here: spec.rayClusterDeletionDelaySeconds below 0, which the CRD's
// minimum of 0 refuses at every release that checks it.
#include <array>
#include <string>

#include "ray_webhook/core/spec/go_duration.h"
#include "raycluster_spec_support.h"
#include "spec_json.h"
#include "spec_rules.h"

namespace ray_webhook {

namespace {

using spec_json::Annotation;
using spec_json::At;
using spec_json::Boolean;
using spec_json::Integer;
using spec_json::Json;
using spec_json::Present;
using spec_json::String;

using cluster_spec::Add;

std::optional<std::string_view> UpgradeType(const SpecContext& ctx) {
  return String(At(ctx.object, "spec.upgradeStrategy.type"));
}

constexpr std::string_view kIncremental = "NewClusterWithIncrementalUpgrade";

// ValidateRayServiceMetadata.
void CheckName(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  cluster_spec::CheckNameOfClusterOwner(ctx, "rayservice-name", "RayService",
                                        "the RayClusters named after it keep valid names", out);
}

// A Go duration ("5m", "1h") or a whole number of seconds, above zero.
void CheckInitializingTimeout(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  constexpr std::string_view kKey = "ray.io/initializing-timeout";
  const std::string_view value = Annotation(ctx.object, kKey).value_or("");
  if (value.empty()) return;
  const std::string path = "metadata.annotations[" + std::string(kKey) + "]";
  if (const std::optional<std::int64_t> ns = ParseGoDuration(value)) {
    if (*ns <= 0) Add(out, "rayservice-initializing-timeout", path, "must be a duration above zero, such as 10m");
  } else if (const std::optional<std::int64_t> seconds = ParseGoInt(value)) {
    if (*seconds <= 0) Add(out, "rayservice-initializing-timeout", path, "must be a number of seconds above zero");
  } else {
    Add(out, "rayservice-initializing-timeout", path,
        spec_json::SingleQuoted(value) + " is neither a duration such as 5m or 1h nor a number of seconds");
  }
}

void CheckK8sTokenAuth(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  constexpr std::string_view kPath = "spec.rayClusterConfig.authOptions.enableK8sTokenAuth";
  if (!Boolean(At(ctx.object, kPath)).value_or(false)) return;
  Add(out, "rayservice-k8s-token-auth", std::string(kPath),
      "Kubernetes token authentication is not supported for a RayService's clusters");
}

// KubeRay names the head Service of each of a RayService's clusters itself.
void CheckHeadServiceName(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  constexpr std::string_view kPath = "spec.rayClusterConfig.headGroupSpec.headService.metadata.name";
  if (String(At(ctx.object, kPath)).value_or("").empty()) return;
  Add(out, "rayservice-head-service-name", std::string(kPath),
      "a RayService names its clusters' head Services itself; remove the name");
}

void CheckUpgradeStrategy(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const std::optional<std::string_view> type = UpgradeType(ctx);
  if (!type || *type == "NewCluster" || *type == "None" || *type == kIncremental) return;
  Add(out, "rayservice-upgrade-strategy", "spec.upgradeStrategy.type",
      spec_json::SingleQuoted(*type) +
          " is not an upgrade strategy: use NewClusterWithIncrementalUpgrade, NewCluster or "
          "None");
}

// Releases 1.3 and 1.4 know only NewCluster and None.
void CheckUpgradeStrategyBeforeIncremental(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (UpgradeType(ctx) != kIncremental) return;
  Add(out, "rayservice-upgrade-strategy-before-incremental", "spec.upgradeStrategy.type",
      "this operator release knows only the NewCluster and None upgrade strategies");
}

void CheckIncrementalUpgradeAutoscaling(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (UpgradeType(ctx) != kIncremental) return;
  if (Boolean(At(ctx.object, "spec.rayClusterConfig.enableInTreeAutoscaling")).value_or(false)) return;
  Add(out, "rayservice-incremental-upgrade-autoscaling", "spec.rayClusterConfig.enableInTreeAutoscaling",
      "NewClusterWithIncrementalUpgrade needs the Ray autoscaler: set enableInTreeAutoscaling to true");
}

void CheckClusterUpgradeOptions(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  constexpr std::string_view kRule = "rayservice-cluster-upgrade-options";
  constexpr std::string_view kPath = "spec.upgradeStrategy.clusterUpgradeOptions";
  if (UpgradeType(ctx) != kIncremental) return;
  Json options = At(ctx.object, kPath);
  const auto field = [&](std::string_view key) { return std::string(kPath) + "." + std::string(key); };
  if (!Present(options)) {
    Add(out, kRule, std::string(kPath), "NewClusterWithIncrementalUpgrade needs clusterUpgradeOptions");
    return;
  }
  // The CRD defaults maxSurgePercent to 100.
  const std::int64_t max_surge = Integer(At(options, "maxSurgePercent")).value_or(100);
  const std::optional<std::int64_t> step = Integer(At(options, "stepSizePercent"));
  const std::optional<std::int64_t> interval = Integer(At(options, "intervalSeconds"));
  if (max_surge < 0 || max_surge > 100) {
    Add(out, kRule, field("maxSurgePercent"), "must be between 0 and 100");
  } else if (!step || *step < 0 || *step > 100) {
    Add(out, kRule, field("stepSizePercent"), "must be between 0 and 100");
  } else if (!interval || *interval <= 0) {
    Add(out, kRule, field("intervalSeconds"), "must be above 0");
  } else if (String(At(options, "gatewayClassName")).value_or("").empty()) {
    Add(out, kRule, field("gatewayClassName"), "NewClusterWithIncrementalUpgrade needs a Gateway class name");
  }
}

// Since 1.7: traffic moves in steps no larger than the surge of capacity.
void CheckUpgradeStepWithinSurge(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  constexpr std::string_view kPath = "spec.upgradeStrategy.clusterUpgradeOptions";
  if (UpgradeType(ctx) != kIncremental) return;
  Json options = At(ctx.object, kPath);
  const std::int64_t max_surge = Integer(At(options, "maxSurgePercent")).value_or(100);
  const std::optional<std::int64_t> step = Integer(At(options, "stepSizePercent"));
  if (!step || max_surge < 0 || max_surge > 100 || *step < 0 || *step > 100 || *step <= max_surge) return;
  Add(out, "rayservice-upgrade-step-within-surge", std::string(kPath) + ".stepSizePercent",
      "must not exceed maxSurgePercent (" + std::to_string(max_surge) + ")");
}

constexpr std::string_view kIncrementalGate = "RayServiceIncrementalUpgrade";

// clang-format off
constexpr std::array kRayServiceRules = {
    SpecRule{"rayservice-name", kSpecRayService, {1, 4, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:633@v1.7.0", CheckName},
    SpecRule{"rayservice-initializing-timeout", kSpecRayService, {1, 5, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:651@v1.7.0", CheckInitializingTimeout},
    SpecRule{"rayservice-k8s-token-auth", kSpecRayService, {1, 6, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:681@v1.7.0", CheckK8sTokenAuth},
    SpecRule{"rayservice-head-service-name", kSpecRayService, {1, 3, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:689@v1.7.0", CheckHeadServiceName},
    SpecRule{"rayservice-upgrade-strategy", kSpecRayService, {1, 3, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:694@v1.7.0", CheckUpgradeStrategy},
    SpecRule{"rayservice-upgrade-strategy-before-incremental", kSpecRayService, {1, 3, 0}, {1, 5, 0}, "",
             "ray-operator/controllers/ray/utils/validation.go:158@v1.3.0", CheckUpgradeStrategyBeforeIncremental},
    SpecRule{"rayservice-incremental-upgrade-autoscaling", kSpecRayService, {1, 5, 0}, {}, kIncrementalGate,
             "ray-operator/controllers/ray/utils/validation.go:718@v1.7.0", CheckIncrementalUpgradeAutoscaling},
    SpecRule{"rayservice-cluster-upgrade-options", kSpecRayService, {1, 5, 0}, {}, kIncrementalGate,
             "ray-operator/controllers/ray/utils/validation.go:723@v1.7.0", CheckClusterUpgradeOptions},
    SpecRule{"rayservice-upgrade-step-within-surge", kSpecRayService, {1, 7, 0}, {}, kIncrementalGate,
             "ray-operator/controllers/ray/utils/validation.go:736@v1.7.0", CheckUpgradeStepWithinSurge},
};
// clang-format on

}  // namespace

std::span<const SpecRule> RayServiceSpecRules() { return kRayServiceRules; }

}  // namespace ray_webhook
