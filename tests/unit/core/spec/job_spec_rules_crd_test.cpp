// The refusals of the RayJob, RayService and RayCronJob rules that the CRD's
// own schema also makes (CEL rules, minimums), so no case file can hold them:
// they are checked here on objects the API server would not store.
#include <gtest/gtest.h>

#include "core/spec/spec_validation.h"
#include "spec_dom.h"

namespace ray_webhook {
namespace {

using nlohmann::json;

json Job(json spec_fields) {
  json spec = {
      {"entrypoint", "python job.py"},
      {"rayClusterSpec",
       {{"headGroupSpec",
         {{"template", {{"spec", {{"containers", {{{"name", "ray-head"}, {"image", "rayproject/ray:2.52.0"}}}}}}}}}}}}};
  spec.update(spec_fields);
  return {{"apiVersion", "ray.io/v1"}, {"kind", "RayJob"}, {"metadata", {{"name", "job"}}}, {"spec", spec}};
}

std::vector<std::string> Paths(const char* rule_id, const json& object, RayObjectKind kind = RayObjectKind::kRayJob) {
  const SpecRule* rule = FindSpecRule(rule_id);
  EXPECT_NE(rule, nullptr) << rule_id;
  if (rule == nullptr) return {};
  KubeRayTarget target;
  target.version = {1, 7, 0};
  std::vector<std::string> paths;
  for (const SpecFinding& f : CheckSpecRule(*rule, testing::SpecDom(object).Root(), kind, target))
    paths.push_back(f.field_path);
  return paths;
}

using Strings = std::vector<std::string>;

TEST(JobSpecRulesCrdTest, DeletionConditionNeedsExactlyOneStatusAndNoNegativeTtl) {
  const json both = {{"policy", "DeleteSelf"},
                     {"condition", {{"jobStatus", "FAILED"}, {"jobDeploymentStatus", "Failed"}}}};
  const json neither = {{"policy", "DeleteSelf"}, {"condition", {{"ttlSeconds", 5}}}};
  const json negative = {{"policy", "DeleteSelf"}, {"condition", {{"jobStatus", "FAILED"}, {"ttlSeconds", -1}}}};
  EXPECT_EQ(
      Paths("rayjob-deletion-rules", Job({{"deletionStrategy", {{"deletionRules", {both, neither, negative}}}}})),
      (Strings{"spec.deletionStrategy.deletionRules[0].condition", "spec.deletionStrategy.deletionRules[1].condition",
               "spec.deletionStrategy.deletionRules[2].condition.ttlSeconds"}));
}

TEST(JobSpecRulesCrdTest, RulesAndLegacyPoliciesDoNotMix) {
  const json rule = {{"policy", "DeleteSelf"}, {"condition", {{"jobStatus", "FAILED"}}}};
  const json strategy = {{"deletionRules", {rule}}, {"onSuccess", {{"policy", "DeleteSelf"}}}};
  EXPECT_EQ(Paths("rayjob-deletion-rules", Job({{"deletionStrategy", strategy}})),
            (Strings{"spec.deletionStrategy.deletionRules"}));
  EXPECT_EQ(Paths("rayjob-deletion-legacy", Job({{"deletionStrategy", strategy}})), Strings{});
}

TEST(JobSpecRulesCrdTest, LegacyPoliciesComeInPairs) {
  EXPECT_EQ(Paths("rayjob-deletion-legacy", Job({{"deletionStrategy", json::object()}})),
            (Strings{"spec.deletionStrategy"}));
  EXPECT_EQ(Paths("rayjob-deletion-legacy", Job({{"deletionStrategy", {{"onSuccess", {{"policy", "DeleteSelf"}}}}}})),
            (Strings{"spec.deletionStrategy.onFailure"}));
}

TEST(JobSpecRulesCrdTest, PreRunningDeadlineIsPositive) {
  EXPECT_EQ(Paths("rayjob-deadline-seconds", Job({{"preRunningDeadlineSeconds", 0}})),
            (Strings{"spec.preRunningDeadlineSeconds"}));
  EXPECT_EQ(Paths("rayjob-deadline-seconds", Job({{"preRunningDeadlineSeconds", 60}})), Strings{});
}

TEST(JobSpecRulesCrdTest, TimeZoneIsNotEmpty) {
  const json cron = {
      {"apiVersion", "ray.io/v1"},
      {"kind", "RayCronJob"},
      {"metadata", {{"name", "cron"}}},
      {"spec", {{"schedule", "@daily"}, {"timeZone", ""}, {"jobTemplate", Job(json::object())["spec"]}}}};
  EXPECT_EQ(Paths("raycronjob-time-zone", cron, RayObjectKind::kRayCronJob), (Strings{"spec.timeZone"}));
}

TEST(JobSpecRulesCrdTest, StepSizeIsRequired) {
  const json service = {{"apiVersion", "ray.io/v1"},
                        {"kind", "RayService"},
                        {"metadata", {{"name", "svc"}}},
                        {"spec",
                         {{"rayClusterConfig", Job(json::object())["spec"]["rayClusterSpec"]},
                          {"upgradeStrategy",
                           {{"type", "NewClusterWithIncrementalUpgrade"},
                            {"clusterUpgradeOptions", {{"intervalSeconds", 30}, {"gatewayClassName", "istio"}}}}}}}};
  EXPECT_EQ(Paths("rayservice-cluster-upgrade-options", service, RayObjectKind::kRayService),
            (Strings{"spec.upgradeStrategy.clusterUpgradeOptions.stepSizePercent"}));
}

}  // namespace
}  // namespace ray_webhook
