// SpecAdmission: findings of KubeRay's spec checks as /validate answers them,
// and the object text they are read from.
#include "ray_webhook/core/spec/spec_admission.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ray_webhook/core/decode/object_decoder.h"
#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

std::vector<SpecFinding> Findings(std::initializer_list<const char*> rules) {
  std::vector<SpecFinding> out;
  std::size_t i = 0;
  for (const char* rule : rules) {
    out.push_back({rule, "spec.workerGroupSpecs[" + std::to_string(i) + "].minReplicas",
                   "minReplicas " + std::to_string(i) + " is above maxReplicas"});
    ++i;
  }
  return out;
}

TEST(SpecAdmission, EnforceDeniesNamingEachFindingAndTheOperatorRelease) {
  PolicyConfig policy;
  policy.kuberay.version = {1, 6, 2};
  Decision d;
  DecideSpecFindings(Findings({"worker-replicas-range"}), RayObjectKind::kRayCluster, "rc", policy, d);
  ASSERT_FALSE(d.allowed);
  EXPECT_EQ(d.denial.code, 422);
  EXPECT_EQ(d.denial.reason, "Invalid");
  EXPECT_EQ(d.denial.rule, "worker-replicas-range");
  EXPECT_EQ(d.denial.message.rfind("RayCluster \"rc\": spec.workerGroupSpecs[0].minReplicas: minReplicas 0 is above "
                                   "maxReplicas (worker-replicas-range). KubeRay 1.6.2 refuses",
                                   0),
            0u)
      << d.denial.message;
  EXPECT_TRUE(d.warnings.empty());
}

TEST(SpecAdmission, SeveralRulesDenyTogetherUnderTheFamilyName) {
  PolicyConfig policy;
  Decision d;
  DecideSpecFindings(Findings({"a-rule", "b-rule"}), RayObjectKind::kRayJob, "job", policy, d);
  ASSERT_FALSE(d.allowed);
  EXPECT_EQ(d.denial.rule, kKubeRaySpecRule);
  EXPECT_NE(d.denial.message.find("(a-rule); spec.workerGroupSpecs[1].minReplicas"), std::string::npos);
  EXPECT_EQ(d.denial.message.rfind("RayJob \"job\": ", 0), 0u);
}

TEST(SpecAdmission, AtMostFiveFindingsAreShownAndTheRestCounted) {
  PolicyConfig policy;
  Decision d;
  DecideSpecFindings(Findings({"r", "r", "r", "r", "r", "r", "r"}), RayObjectKind::kRayCluster, "rc", policy, d);
  ASSERT_FALSE(d.allowed);
  EXPECT_EQ(d.denial.rule, "r");
  EXPECT_NE(d.denial.message.find("[4]"), std::string::npos);
  EXPECT_EQ(d.denial.message.find("[5]"), std::string::npos);
  EXPECT_NE(d.denial.message.find("; and 2 more."), std::string::npos);
}

TEST(SpecAdmission, WarnAllowsWithOneWarningPerFindingAndOffDropsIt) {
  PolicyConfig policy;
  policy.spec_mode = RuleMode::kWarn;
  policy.spec_rule_modes["quiet-rule"] = RuleMode::kOff;
  Decision d;
  DecideSpecFindings(Findings({"loud-rule", "quiet-rule"}), RayObjectKind::kRayService, "svc", policy, d);
  EXPECT_TRUE(d.allowed);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0], "loud-rule: spec.workerGroupSpecs[0].minReplicas: minReplicas 0 is above maxReplicas");
}

TEST(SpecAdmission, ARuleOfItsOwnModeWinsOverTheFamily) {
  PolicyConfig policy;
  policy.spec_mode = RuleMode::kWarn;
  policy.spec_rule_modes["strict-rule"] = RuleMode::kEnforce;
  Decision d;
  DecideSpecFindings(Findings({"lax-rule", "strict-rule"}), RayObjectKind::kRayCluster, "rc", policy, d);
  ASSERT_FALSE(d.allowed);
  EXPECT_EQ(d.denial.rule, "strict-rule");
  EXPECT_EQ(d.denial.message.find("lax-rule"), std::string::npos) << "a warn-mode finding is not part of the denial";
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].rfind("lax-rule: ", 0), 0u);
}

TEST(SpecAdmission, ManyWarningsAreCapped) {
  PolicyConfig policy;
  policy.spec_mode = RuleMode::kWarn;
  Decision d;
  DecideSpecFindings(Findings({"r", "r", "r", "r", "r", "r", "r", "r"}), RayObjectKind::kRayCluster, "rc", policy, d);
  EXPECT_TRUE(d.allowed);
  ASSERT_EQ(d.warnings.size(), kMaxSpecFindings + 1);
  EXPECT_EQ(d.warnings.back(), "kuberay-spec: and 3 more findings");
}

TEST(SpecAdmission, ChecksAreOnUnlessEveryModeIsOff) {
  PolicyConfig policy;
  EXPECT_TRUE(SpecChecksOn(policy));
  policy.spec_mode = RuleMode::kOff;
  EXPECT_FALSE(SpecChecksOn(policy));
  policy.spec_rule_modes["some-rule"] = RuleMode::kOff;
  EXPECT_FALSE(SpecChecksOn(policy));
  policy.spec_rule_modes["other-rule"] = RuleMode::kWarn;
  EXPECT_TRUE(SpecChecksOn(policy));
}

TEST(SpecAdmission, AnObjectWithoutTextHasNoFindingsAndIsNotUnreadable) {
  RayObject object;
  object.kind = RayObjectKind::kRayCluster;
  bool unreadable = true;
  EXPECT_TRUE(NewSpecFindings(object, nullptr, PolicyConfig{}, &unreadable).empty());
  EXPECT_FALSE(unreadable);
}

TEST(SpecAdmission, ABareObjectKeepsItsTextForTheChecks) {
  ObjectDecoder decoder;
  const nlohmann::json object =
      nlohmann::json::parse(testing::ReadFixture("reviews/rayjob-dupmount.json"))["request"]["object"];
  const std::string text = "  \n" + object.dump(2) + "\n ";
  RayObject job;
  ASSERT_TRUE(decoder.DecodeRayObject(text, RayObjectKind::kRayJob, job).ok());
  ASSERT_FALSE(job.raw_json.empty());
  EXPECT_EQ(job.raw_json.front(), '{');
  EXPECT_EQ(job.raw_json.back(), '}');
  EXPECT_EQ(nlohmann::json::parse(job.raw_json), object);
}

}  // namespace
}  // namespace ray_webhook
