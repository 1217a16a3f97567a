// The Ray autoscaler and token authentication in a cluster spec: how
// autoscaler v2 is asked for, what it needs of restart policies, what KubeRay
// gives the autoscaler container itself, and the Ray releases token
// authentication needs (ValidateRayClusterSpec).
#include "raycluster_spec_checks.h"
#include "raycluster_spec_support.h"

namespace ray_webhook::cluster_spec {

using spec_json::Member;
using spec_json::String;

namespace {

constexpr std::string_view kAutoscalerV2Env = "RAY_enable_autoscaler_v2";

std::optional<EnvEntry> HeadAutoscalerV2Env(const SpecContext& ctx) {
  const Group head = HeadGroup(ctx);
  return EnvVar(RayContainer(head), RayContainerPath(head), kAutoscalerV2Env);
}

// A restart policy autoscaler v2 allows: unset or Never.
void RequireNeverRestart(const Group& group, std::vector<SpecFinding>& out) {
  const std::optional<std::string_view> policy = String(spec_json::At(group.spec, "template.spec.restartPolicy"));
  if (!policy || policy->empty() || *policy == "Never") return;
  Add(out, "autoscaler-v2-restart-policy", group.path + ".template.spec.restartPolicy",
      "with autoscaler v2 the pods of " + group.Name() +
          " must not restart: set restartPolicy to Never or leave it "
          "unset");
}

bool TokenAuth(const SpecContext& ctx) { return String(SpecField(ctx, "authOptions.mode")) == "token"; }

// The rayVersion, parsed, when token authentication can read it.
std::optional<std::vector<std::uint64_t>> RayVersion(const SpecContext& ctx) {
  return ParseGenericVersion(String(SpecField(ctx, "rayVersion")).value_or(""));
}

}  // namespace

void CheckAutoscalerV2EnvWithoutAutoscaling(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (AutoscalingEnabled(ctx) || !HeadEnvAsksAutoscalerV2(ctx)) return;
  Add(out, "autoscaler-v2-env-without-autoscaling", HeadAutoscalerV2Env(ctx)->path,
      "RAY_enable_autoscaler_v2 asks for autoscaler v2 but the autoscaler is off; set enableInTreeAutoscaling: true "
      "or remove the variable");
}

void CheckAutoscalerVersionEnvConflict(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!AutoscalingEnabled(ctx) || !spec_json::Present(SpecField(ctx, "autoscalerOptions.version"))) return;
  const std::optional<EnvEntry> env = HeadAutoscalerV2Env(ctx);
  if (!env) return;
  Add(out, "autoscaler-version-env-conflict", env->path,
      "autoscalerOptions.version already picks the autoscaler; remove RAY_enable_autoscaler_v2 from the head");
}

void CheckAutoscalerV2RestartPolicy(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  if (!AutoscalingEnabled(ctx) || !AutoscalerVersionV2(ctx)) return;
  for (const Group& group : AllGroups(ctx)) RequireNeverRestart(group, out);
}

void CheckAutoscalerIdleTimeout(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const std::optional<std::int64_t> seconds =
      spec_json::Integer(SpecField(ctx, "autoscalerOptions.idleTimeoutSeconds"));
  if (!seconds || *seconds >= 0) return;
  Add(out, "autoscaler-idle-timeout", SpecPath(ctx, "autoscalerOptions.idleTimeoutSeconds"),
      "the autoscaler's idle timeout cannot be negative");
}

void CheckAutoscalerStartCommandEnv(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  Json env = SpecField(ctx, "autoscalerOptions.env");
  const std::optional<std::size_t> i = IndexWhere(env, "name", "KUBERAY_GEN_AUTOSCALER_START_CMD");
  if (!i) return;
  Add(out, "autoscaler-start-command-env", spec_json::Item(SpecPath(ctx, "autoscalerOptions"), "env", *i),
      "KubeRay sets KUBERAY_GEN_AUTOSCALER_START_CMD in the autoscaler container itself; remove it");
}

void CheckAuthRayVersion(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  static const std::vector<std::uint64_t> kFirstRayWithTokens = {2, 52, 0};
  if (!TokenAuth(ctx)) return;
  const std::string_view text = String(SpecField(ctx, "rayVersion")).value_or("");
  const std::string path = SpecPath(ctx, "rayVersion");
  const std::optional<std::vector<std::uint64_t>> version = RayVersion(ctx);
  if (text.empty()) {
    Add(out, "auth-ray-version", path, "token authentication needs Ray 2.52.0 or later; set rayVersion");
  } else if (!version) {
    Add(out, "auth-ray-version", path, "token authentication needs Ray 2.52.0 or later, and this is not a version");
  } else if (VersionLess(*version, kFirstRayWithTokens)) {
    Add(out, "auth-ray-version", path, "token authentication needs Ray 2.52.0 or later");
  }
}

void CheckAuthKubernetesToken(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  static const std::vector<std::uint64_t> kFirstRayWithK8sTokens = {2, 55, 0};
  if (spec_json::Boolean(SpecField(ctx, "authOptions.enableK8sTokenAuth")) != true) return;
  const std::string path = SpecPath(ctx, "authOptions.enableK8sTokenAuth");
  if (!TokenAuth(ctx)) {
    Add(out, "auth-k8s-token", path, "Kubernetes token authentication needs authOptions.mode: token");
    return;
  }
  // A missing or unreadable rayVersion is auth-ray-version's finding.
  const std::optional<std::vector<std::uint64_t>> version = RayVersion(ctx);
  if (version && VersionLess(*version, kFirstRayWithK8sTokens)) {
    Add(out, "auth-k8s-token", path, "Kubernetes token authentication needs Ray 2.55.0 or later");
  }
  if (spec_json::NonEmptyString(SpecField(ctx, "authOptions.secretName"))) {
    Add(out, "auth-k8s-token", SpecPath(ctx, "authOptions.secretName"),
        "Kubernetes token authentication takes no token Secret; remove secretName or enableK8sTokenAuth");
  }
}

}  // namespace ray_webhook::cluster_spec
