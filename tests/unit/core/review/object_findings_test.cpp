#include "ray_webhook/core/review/object_findings.h"

#include <gtest/gtest.h>

#include "ray_webhook/core/decode/review_decoder.h"
#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

std::vector<RuleFinding> Findings(const std::string& review, PolicyConfig policy = {}) {
  static ReviewDecoder decoder;
  static std::string body;
  body = testing::ReadFixture("reviews/" + review + ".json");
  auto request = decoder.Decode(body);
  EXPECT_TRUE(request.ok()) << request.error();
  if (!request.ok()) return {};
  return ObjectFindings(**request, policy);
}

std::vector<std::string> Rules(const std::vector<RuleFinding>& findings) {
  std::vector<std::string> rules;
  for (const RuleFinding& f : findings) rules.push_back(f.rule);
  return rules;
}

using Names = std::vector<std::string>;

TEST(ObjectFindings, APodTheOperatorBuiltRightHasNone) { EXPECT_EQ(Rules(Findings("kuberay-1.7-worker")), Names{}); }

TEST(ObjectFindings, AnUnmutatedWorkerNamesWhatTheMutationWouldChange) {
  const auto f = Findings("kuberay-0.4-worker");
  ASSERT_EQ(Rules(f), Names{"unmutated"});
  EXPECT_EQ(f[0].field_path, "spec.containers[0].args[0]");  // the first operation: the bare --address
  EXPECT_NE(f[0].message.find("fq_ray_ip_added"), std::string::npos) << f[0].message;
  EXPECT_NE(f[0].message.find("address_rewritten"), std::string::npos) << f[0].message;
}

TEST(ObjectFindings, MirrorAndOptedOutPodsAreNotUnmutated) {
  EXPECT_EQ(Rules(Findings("opt-out")), Names{});
  EXPECT_EQ(Rules(Findings("mirror-pod")), Names{});
}

TEST(ObjectFindings, PodRulesReportInFull) {
  const auto dup = Findings("dupmount-worker");
  ASSERT_FALSE(dup.empty());
  EXPECT_EQ(dup[0].rule, "duplicate-mount");
  EXPECT_NE(dup[0].message.find("/dev/shm"), std::string::npos) << dup[0].message;
  const auto head = Findings("head-named-otherwise");
  ASSERT_EQ(Rules(head), Names{"head-name"});
  EXPECT_EQ(head[0].field_path, "metadata.name");
  EXPECT_EQ(Rules(Findings("dup-env-warning")).front(), "duplicate-env");
}

TEST(ObjectFindings, TemplateRulesGiveTheFieldPath) {
  const auto dup = Findings("raycluster-dupmount-shm");
  ASSERT_EQ(Rules(dup), Names{"duplicate-mount"});
  EXPECT_EQ(dup[0].field_path, "spec.workerGroupSpecs[1].template.spec.containers[0].volumeMounts[1]");
  EXPECT_EQ(Rules(Findings("raycluster-bare-address")), Names{"bare-address"});
  const auto long_name = Findings("raycluster-long-name");
  ASSERT_EQ(Rules(long_name), Names{"head-name"});
  EXPECT_EQ(long_name[0].message.rfind("RayCluster ", 0), 0u) << long_name[0].message;
}

TEST(ObjectFindings, ModesOffAndHeadUniquenessOffReportNothing) {
  PolicyConfig policy;
  policy.duplicate_mount_mode = RuleMode::kOff;
  EXPECT_EQ(Rules(Findings("raycluster-dupmount-shm", policy)), Names{});
  policy.head_uniqueness.name = false;
  EXPECT_EQ(Rules(Findings("head-named-otherwise", policy)), Names{});
}

}  // namespace
}  // namespace ray_webhook
