// The rows of RayJobSpecRules(): ValidateRayJobMetadata, ValidateRayJobSpec and
// the deletion checks it calls (ray-operator/controllers/ray/utils/validation.go),
// one SpecRule each. KubeRay checks a RayCronJob's spec.jobTemplate as a RayJob
// spec too (ValidateRayCronJobSpec calls ValidateRayJobSpec), so the spec rules
// read both kinds, each at its own path.
//
// KubeRay stops at its first error; each rule here reports its own refusal
// only where KubeRay's path reaches it or an earlier check refuses the object
// anyway, so no rule refuses what the operator accepts.
#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <utility>

#include "raycluster_spec_support.h"
#include "spec_json.h"
#include "spec_rules.h"

namespace ray_webhook {

namespace {

using spec_json::At;
using spec_json::Boolean;
using spec_json::Field;
using spec_json::Integer;
using spec_json::Item;
using spec_json::Json;
using spec_json::Member;
using spec_json::NonEmptyArray;
using spec_json::NonEmptyObject;
using spec_json::Present;
using spec_json::String;

constexpr unsigned kJobSpecKinds = kSpecRayJob | kSpecRayCronJob;

// The RayJob spec of this object and its field path: a RayJob's spec, or the
// spec.jobTemplate a RayCronJob creates its RayJobs from.
struct JobSpec {
  Json spec;
  std::string path;

  std::string At(std::string_view dotted_keys) const { return Field(path, dotted_keys); }
  Json Get(std::string_view dotted_keys) const { return spec_json::At(spec, dotted_keys); }
  bool Flag(std::string_view key) const { return Boolean(Get(key)).value_or(false); }
  // spec.clusterSelector set: the job runs on an existing RayCluster.
  bool ClusterSelectorMode() const { return NonEmptyObject(Get("clusterSelector")); }
  // The CRD defaults submissionMode to K8sJobMode.
  std::string_view SubmissionMode() const { return String(Get("submissionMode")).value_or("K8sJobMode"); }
  // utils.IsAutoscalingEnabled over spec.rayClusterSpec.
  bool Autoscaling() const { return Boolean(Get("rayClusterSpec.enableInTreeAutoscaling")).value_or(false); }
};

JobSpec JobSpecOf(const SpecContext& ctx) {
  JobSpec job;
  if (ctx.kind == RayObjectKind::kRayJob) job.path = "spec";
  if (ctx.kind == RayObjectKind::kRayCronJob) job.path = "spec.jobTemplate";
  if (!job.path.empty()) job.spec = spec_json::At(ctx.object, job.path);
  if (!job.spec.IsObject()) job.spec = Json();
  return job;
}

using cluster_spec::Add;

bool DeletesCluster(std::string_view policy) { return policy == "DeleteCluster" || policy == "DeleteWorkers"; }

// ValidateRayJobMetadata.
void CheckName(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  cluster_spec::CheckNameOfClusterOwner(ctx, "rayjob-name", "RayJob",
                                        "the RayCluster named after it keeps a valid name", out);
}

void CheckSuspend(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const JobSpec job = JobSpecOf(ctx);
  if (!job.Flag("suspend")) return;
  if (!job.Flag("shutdownAfterJobFinishes")) {
    Add(out, "rayjob-suspend", job.At("suspend"),
        "a RayJob can be suspended only with shutdownAfterJobFinishes: true, so that its RayCluster can be deleted");
  } else if (job.ClusterSelectorMode()) {
    Add(out, "rayjob-suspend", job.At("suspend"),
        "a RayJob that runs on an existing cluster (clusterSelector) cannot be suspended");
  }
}

void CheckTtlAfterFinished(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const JobSpec job = JobSpecOf(ctx);
  const std::int64_t ttl = Integer(job.Get("ttlSecondsAfterFinished")).value_or(0);
  if (ttl < 0) {
    Add(out, "rayjob-ttl-after-finished", job.At("ttlSecondsAfterFinished"), "must be 0 or more seconds");
  } else if (ttl > 0 && !job.Flag("shutdownAfterJobFinishes")) {
    Add(out, "rayjob-ttl-after-finished", job.At("ttlSecondsAfterFinished"),
        "takes effect only with shutdownAfterJobFinishes: true; set it or remove the TTL");
  }
}

// validateDeletionConfiguration: deletionStrategy needs the RayJobDeletionPolicy gate.
void CheckDeletionStrategyGate(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const JobSpec job = JobSpecOf(ctx);
  if (!Present(job.Get("deletionStrategy"))) return;
  Add(out, "rayjob-deletion-strategy-gate", job.At("deletionStrategy"),
      "the operator runs without the RayJobDeletionPolicy feature gate, which deletionStrategy needs");
}

// validateDeletionConfiguration's mode checks, validateDeletionRules,
// validateDeletionCondition and validateTTLConsistency.
void CheckDeletionRules(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  constexpr std::string_view kRule = "rayjob-deletion-rules";
  const JobSpec job = JobSpecOf(ctx);
  Json strategy = job.Get("deletionStrategy");
  Json rules = Member(strategy, "deletionRules");
  if (!NonEmptyArray(rules)) return;
  const std::string rules_path = job.At("deletionStrategy.deletionRules");
  if (job.Flag("shutdownAfterJobFinishes")) {
    Add(out, kRule, rules_path,
        "deletionRules replace shutdownAfterJobFinishes: set shutdownAfterJobFinishes to false or remove the rules");
    return;
  }
  if (Present(Member(strategy, "onSuccess")) || Present(Member(strategy, "onFailure"))) {
    Add(out, kRule, rules_path, "deletionRules cannot be used together with onSuccess and onFailure");
    return;
  }
  // (condition kind, its value) -> policy -> (TTL, index of the rule).
  using Group = std::map<std::string, std::pair<std::int64_t, std::size_t>, std::less<>>;
  std::vector<std::pair<std::string, Group>> groups;
  for (std::size_t i = 0; i < rules.Size(); ++i) {
    const Json rule = rules.Nth(i);
    const std::string at = Item(job.At("deletionStrategy"), "deletionRules", i);
    Json condition = Member(rule, "condition");
    const std::optional<std::string_view> job_status = String(Member(condition, "jobStatus"));
    const std::optional<std::string_view> deployment_status = String(Member(condition, "jobDeploymentStatus"));
    if (job_status && deployment_status) {
      Add(out, kRule, Field(at, "condition"), "a deletion condition sets jobStatus or jobDeploymentStatus, not both");
      continue;
    }
    if (!job_status && !deployment_status) {
      Add(out, kRule, Field(at, "condition"), "a deletion condition needs jobStatus or jobDeploymentStatus");
      continue;
    }
    const std::int64_t ttl = Integer(Member(condition, "ttlSeconds")).value_or(0);
    if (ttl < 0) {
      Add(out, kRule, Field(at, "condition.ttlSeconds"), "must be 0 or more seconds");
      continue;
    }
    const std::string_view policy = String(Member(rule, "policy")).value_or("");
    if (job.ClusterSelectorMode() && DeletesCluster(policy)) {
      Add(out, kRule, Field(at, "policy"),
          std::string(policy) + " cannot be used by a RayJob that runs on an existing cluster (clusterSelector)");
      continue;
    }
    if (job.Autoscaling() && policy == "DeleteWorkers") {
      Add(out, kRule, Field(at, "policy"), "DeleteWorkers cannot be used with a cluster that autoscales");
      continue;
    }
    const std::string key =
        job_status ? "jobStatus " + std::string(*job_status) : "jobDeploymentStatus " + std::string(*deployment_status);
    auto group = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == key; });
    if (group == groups.end()) group = groups.insert(groups.end(), {key, Group{}});
    if (group->second.contains(policy)) {
      Add(out, kRule, at, "a second rule for " + std::string(policy) + " on " + key);
      continue;
    }
    group->second.emplace(std::string(policy), std::pair{ttl, i});
  }
  // Workers go first, then the cluster, then the RayJob: a later step's TTL
  // may not be shorter than an earlier one's.
  constexpr std::array<std::string_view, 3> kOrder = {"DeleteWorkers", "DeleteCluster", "DeleteSelf"};
  for (const auto& [key, policies] : groups) {
    const std::pair<std::int64_t, std::size_t>* previous = nullptr;
    std::string_view previous_policy;
    for (const std::string_view policy : kOrder) {
      const auto it = policies.find(policy);
      if (it == policies.end()) continue;
      if (previous != nullptr && it->second.first < previous->first) {
        Add(out, kRule,
            Field(Item(job.At("deletionStrategy"), "deletionRules", it->second.second), "condition.ttlSeconds"),
            "on " + key + ", " + std::string(policy) + " must wait at least as long as " +
                std::string(previous_policy) + " (" + std::to_string(previous->first) + "s)");
      }
      previous = &it->second;
      previous_policy = policy;
    }
  }
}

// validateDeletionConfiguration's last case and validateLegacyDeletionPolicies:
// onSuccess and onFailure.
void CheckDeletionLegacy(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  constexpr std::string_view kRule = "rayjob-deletion-legacy";
  const JobSpec job = JobSpecOf(ctx);
  Json strategy = job.Get("deletionStrategy");
  if (!Present(strategy) || NonEmptyArray(Member(strategy, "deletionRules"))) return;
  Json on_success = Member(strategy, "onSuccess");
  Json on_failure = Member(strategy, "onFailure");
  if (!Present(on_success) && !Present(on_failure)) {
    Add(out, kRule, job.At("deletionStrategy"), "needs both onSuccess and onFailure, or deletionRules");
    return;
  }
  if (!Present(on_success) || !Present(on_failure)) {
    Add(out, kRule, job.At(Present(on_success) ? "deletionStrategy.onFailure" : "deletionStrategy.onSuccess"),
        "onSuccess and onFailure are set together");
    return;
  }
  const std::optional<std::string_view> success = String(Member(on_success, "policy"));
  const std::optional<std::string_view> failure = String(Member(on_failure, "policy"));
  const std::string success_path = job.At("deletionStrategy.onSuccess.policy");
  const std::string failure_path = job.At("deletionStrategy.onFailure.policy");
  if (!success || !failure) {
    Add(out, kRule, success ? failure_path : success_path, "a deletion policy must be set");
    return;
  }
  if (job.ClusterSelectorMode() && (DeletesCluster(*success) || DeletesCluster(*failure))) {
    const bool on_success_side = DeletesCluster(*success);
    Add(out, kRule, on_success_side ? success_path : failure_path,
        std::string(on_success_side ? *success : *failure) +
            " cannot be used by a RayJob that runs on an existing cluster (clusterSelector)");
    return;
  }
  if ((*success == "DeleteWorkers" || *failure == "DeleteWorkers") && job.Autoscaling()) {
    Add(out, kRule, *success == "DeleteWorkers" ? success_path : failure_path,
        "DeleteWorkers cannot be used with a cluster that autoscales");
    return;
  }
  if (job.Flag("shutdownAfterJobFinishes") && (*success == "DeleteNone" || *failure == "DeleteNone")) {
    Add(out, kRule, *success == "DeleteNone" ? success_path : failure_path,
        "DeleteNone contradicts shutdownAfterJobFinishes: true; set one of them differently");
  }
}

// Releases 1.3 and 1.4: spec.deletionPolicy, before deletionStrategy replaced it.
void CheckDeletionPolicyGate(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const JobSpec job = JobSpecOf(ctx);
  if (!Present(job.Get("deletionPolicy"))) return;
  Add(out, "rayjob-deletion-policy-gate", job.At("deletionPolicy"),
      "the operator runs without the RayJobDeletionPolicy feature gate, which deletionPolicy needs");
}

void CheckDeletionPolicy(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  constexpr std::string_view kRule = "rayjob-deletion-policy";
  const JobSpec job = JobSpecOf(ctx);
  const std::optional<std::string_view> policy = String(job.Get("deletionPolicy"));
  if (!policy) return;
  if (job.ClusterSelectorMode() && DeletesCluster(*policy)) {
    Add(out, kRule, job.At("deletionPolicy"),
        std::string(*policy) + " cannot be used by a RayJob that runs on an existing cluster (clusterSelector)");
  } else if (*policy == "DeleteWorkers" && job.Autoscaling()) {
    Add(out, kRule, job.At("deletionPolicy"), "DeleteWorkers cannot be used with a cluster that autoscales");
  } else if (*policy == "DeleteNone" && job.Flag("shutdownAfterJobFinishes")) {
    Add(out, kRule, job.At("deletionPolicy"),
        "DeleteNone contradicts shutdownAfterJobFinishes: true; set one of them differently");
  }
}

void CheckClusterSource(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const JobSpec job = JobSpecOf(ctx);
  if (!job.spec || Present(job.Get("rayClusterSpec")) || job.ClusterSelectorMode()) return;
  Add(out, "rayjob-cluster-source", job.At("rayClusterSpec"),
      "a RayJob needs rayClusterSpec for a new cluster or clusterSelector for an existing one");
}

void CheckClusterSelector(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const JobSpec job = JobSpecOf(ctx);
  if (!job.ClusterSelectorMode()) return;
  // The key holds dots, so it is read as one member, not as a dotted path.
  if (String(Member(job.Get("clusterSelector"), "ray.io/cluster")).value_or("").empty()) {
    Add(out, "rayjob-cluster-selector", job.At("clusterSelector"),
        "clusterSelector must name the cluster in its ray.io/cluster key");
  } else if (job.SubmissionMode() == "SidecarMode") {
    Add(out, "rayjob-cluster-selector", job.At("submissionMode"),
        "SidecarMode cannot submit to an existing cluster (clusterSelector)");
  }
}

void CheckClusterSelectorBackoff(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const JobSpec job = JobSpecOf(ctx);
  if (!job.ClusterSelectorMode() || Integer(job.Get("backoffLimit")).value_or(0) <= 0) return;
  Add(out, "rayjob-cluster-selector-backoff", job.At("backoffLimit"),
      "a RayJob on an existing cluster (clusterSelector) is not retried; set backoffLimit to 0");
}

void CheckInteractiveBackoff(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const JobSpec job = JobSpecOf(ctx);
  if (job.SubmissionMode() != "InteractiveMode" || Integer(job.Get("backoffLimit")).value_or(0) <= 0) return;
  Add(out, "rayjob-interactive-backoff", job.At("backoffLimit"),
      "an InteractiveMode RayJob is not retried; set backoffLimit to 0");
}

void CheckSidecarMode(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  constexpr std::string_view kRule = "rayjob-sidecar-mode";
  const JobSpec job = JobSpecOf(ctx);
  if (job.SubmissionMode() != "SidecarMode") return;
  if (Present(job.Get("submitterPodTemplate"))) {
    Add(out, kRule, job.At("submitterPodTemplate"),
        "SidecarMode submits from a container in the head Pod and takes no submitter Pod template");
  } else if (Present(job.Get("submitterConfig"))) {
    Add(out, kRule, job.At("submitterConfig"), "SidecarMode has no submitter Job to configure");
  } else if (const std::string_view policy =
                 String(job.Get("rayClusterSpec.headGroupSpec.template.spec.restartPolicy")).value_or("");
             !policy.empty() && policy != "Never") {
    Add(out, kRule, job.At("rayClusterSpec.headGroupSpec.template.spec.restartPolicy"),
        "in SidecarMode the head Pod's restartPolicy must be Never or unset");
  }
}

void CheckK8sTokenAuth(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const JobSpec job = JobSpecOf(ctx);
  if (!Boolean(job.Get("rayClusterSpec.authOptions.enableK8sTokenAuth")).value_or(false)) return;
  Add(out, "rayjob-k8s-token-auth", job.At("rayClusterSpec.authOptions.enableK8sTokenAuth"),
      "Kubernetes token authentication is not supported for a RayJob's cluster");
}

// activeDeadlineSeconds since 1.1; preRunningDeadlineSeconds (1.6) is the same
// check, and its CRD's minimum of 1 refuses it first in a cluster.
void CheckDeadlineSeconds(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const JobSpec job = JobSpecOf(ctx);
  for (const std::string_view key : {"activeDeadlineSeconds", "preRunningDeadlineSeconds"}) {
    if (const std::optional<std::int64_t> seconds = Integer(job.Get(key)); seconds && *seconds <= 0) {
      Add(out, "rayjob-deadline-seconds", job.At(key), "must be a positive number of seconds");
    }
  }
}

void CheckBackoffLimit(const SpecContext& ctx, std::vector<SpecFinding>& out) {
  const JobSpec job = JobSpecOf(ctx);
  if (Integer(job.Get("backoffLimit")).value_or(0) >= 0) return;
  Add(out, "rayjob-backoff-limit", job.At("backoffLimit"), "must be 0 or more retries");
}

// clang-format off
constexpr std::array kRayJobRules = {
    SpecRule{"rayjob-name", kSpecRayJob, {1, 4, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:534@v1.7.0", CheckName},
    SpecRule{"rayjob-suspend", kJobSpecKinds, {1, 1, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:547@v1.7.0", CheckSuspend},
    SpecRule{"rayjob-ttl-after-finished", kJobSpecKinds, {1, 4, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:551@v1.7.0", CheckTtlAfterFinished},
    SpecRule{"rayjob-deletion-policy-gate", kSpecRayJob, {1, 3, 0}, {1, 5, 0}, "!RayJobDeletionPolicy",
             "ray-operator/controllers/ray/utils/validation.go:126@v1.3.0", CheckDeletionPolicyGate},
    SpecRule{"rayjob-deletion-policy", kSpecRayJob, {1, 3, 0}, {1, 5, 0}, "RayJobDeletionPolicy",
             "ray-operator/controllers/ray/utils/validation.go:130@v1.3.0", CheckDeletionPolicy},
    SpecRule{"rayjob-deletion-strategy-gate", kJobSpecKinds, {1, 5, 0}, {}, "!RayJobDeletionPolicy",
             "ray-operator/controllers/ray/utils/validation.go:763@v1.7.0", CheckDeletionStrategyGate},
    SpecRule{"rayjob-deletion-rules", kJobSpecKinds, {1, 5, 0}, {}, "RayJobDeletionPolicy",
             "ray-operator/controllers/ray/utils/validation.go:797@v1.7.0", CheckDeletionRules},
    SpecRule{"rayjob-deletion-legacy", kJobSpecKinds, {1, 5, 0}, {}, "RayJobDeletionPolicy",
             "ray-operator/controllers/ray/utils/validation.go:928@v1.7.0", CheckDeletionLegacy},
    SpecRule{"rayjob-cluster-source", kJobSpecKinds, {1, 1, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:564@v1.7.0", CheckClusterSource},
    SpecRule{"rayjob-cluster-selector", kJobSpecKinds, {1, 5, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:567@v1.7.0", CheckClusterSelector},
    SpecRule{"rayjob-cluster-selector-backoff", kJobSpecKinds, {1, 6, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:575@v1.7.0", CheckClusterSelectorBackoff},
    SpecRule{"rayjob-interactive-backoff", kJobSpecKinds, {1, 4, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:587@v1.7.0", CheckInteractiveBackoff},
    SpecRule{"rayjob-sidecar-mode", kJobSpecKinds, {1, 5, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:591@v1.7.0", CheckSidecarMode},
    SpecRule{"rayjob-k8s-token-auth", kJobSpecKinds, {1, 6, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:606@v1.7.0", CheckK8sTokenAuth},
    SpecRule{"rayjob-deadline-seconds", kJobSpecKinds, {1, 1, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:619@v1.7.0", CheckDeadlineSeconds},
    SpecRule{"rayjob-backoff-limit", kJobSpecKinds, {1, 2, 0}, {}, "",
             "ray-operator/controllers/ray/utils/validation.go:625@v1.7.0", CheckBackoffLimit},
};
// clang-format on

}  // namespace

std::span<const SpecRule> RayJobSpecRules() { return kRayJobRules; }

}  // namespace ray_webhook
