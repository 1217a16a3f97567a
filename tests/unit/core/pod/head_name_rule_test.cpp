#include "ray_webhook/core/pod/head_name_rule.h"

#include <gtest/gtest.h>

#include "support/pod_builder.h"

namespace ray_webhook {
namespace {

using testing::PodBuilder;

RayPodIdentity Id(const PodBuilder& b) { return *IdentifyRayPod(b.pod()); }

TEST(PlanHeadName, GenerateNameOnlyHeadIsNamedAndGenerateNameDropped) {
  PodBuilder b;
  b.RayHead("RayCluster-Kuberay").GenerateName("raycluster-kuberay-head-").Container("ray-head");
  Decision d;
  PlanHeadName(b.pod(), Id(b), d);
  ASSERT_EQ(d.patch.size(), 2u);
  EXPECT_EQ(d.patch[0].op, "add");
  EXPECT_EQ(d.patch[0].path, "/metadata/name");
  EXPECT_EQ(std::get<std::string>(d.patch[0].value), "raycluster-kuberay-head");
  EXPECT_EQ(d.patch[1].op, "remove");
  EXPECT_EQ(d.patch[1].path, "/metadata/generateName");
  EXPECT_EQ(d.mutations, std::vector<Mutation>{Mutation::kHeadNamed});
}

TEST(PlanHeadName, NamedHeadsAndWorkersAreLeftAlone) {
  PodBuilder named;
  named.RayHead("rc").Name("whatever").Container("ray-head");
  Decision d;
  PlanHeadName(named.pod(), Id(named), d);
  EXPECT_TRUE(d.patch.empty());
  PodBuilder worker;
  worker.RayWorker("rc").GenerateName("rc-worker-").Container("ray-worker");
  PlanHeadName(worker.pod(), Id(worker), d);
  EXPECT_TRUE(d.patch.empty());
  EXPECT_TRUE(d.warnings.empty());
}

TEST(PlanHeadName, AutoscalerV2OnOldRayWarnsInstead) {
  PodBuilder b;
  b.RayHead("rc")
      .GenerateName("rc-head-")
      .Container("ray-head")
      .Image("rayproject/ray:2.9.0")
      .Env("RAY_enable_autoscaler_v2", "1");
  Decision d;
  PlanHeadName(b.pod(), Id(b), d);
  EXPECT_TRUE(d.patch.empty());
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_NE(d.warnings[0].find("Autoscaler v2"), std::string::npos);
  EXPECT_NE(d.warnings[0].find("\"rc-head\""), std::string::npos);
  EXPECT_LE(d.warnings[0].size(), 120u);
}

TEST(PlanHeadName, InvalidResultingNameIsNotPatched) {
  PodBuilder b;
  b.RayHead("bad_cluster").GenerateName("x-").Container("ray-head");
  Decision d;
  PlanHeadName(b.pod(), Id(b), d);
  EXPECT_TRUE(d.patch.empty());
  EXPECT_EQ(d.warnings.size(), 1u);
}

TEST(CheckHeadName, OtherNamesAreDeniedWithExplanation) {
  PodBuilder b;
  b.RayHead("raycluster-kuberay").Name("raycluster-kuberay-head-x7k2p").Container("ray-head");
  auto denial = CheckHeadName(b.pod(), Id(b), "");
  ASSERT_TRUE(denial);
  EXPECT_EQ(denial->code, 403);
  EXPECT_EQ(denial->rule, kHeadNameRule);
  for (const char* fragment :
       {"\"raycluster-kuberay-head\"", "\"raycluster-kuberay-head-x7k2p\"", "second head", "--head-uniqueness"}) {
    EXPECT_NE(denial->message.find(fragment), std::string::npos) << fragment << " in " << denial->message;
  }
}

TEST(CheckHeadName, AllowedCases) {
  PodBuilder right;
  right.RayHead("rc").Name("rc-head").Container("ray-head");
  EXPECT_FALSE(CheckHeadName(right.pod(), Id(right), ""));
  PodBuilder unnamed;  // nothing to judge before the API server names it
  unnamed.RayHead("rc").GenerateName("rc-head-").Container("ray-head");
  EXPECT_FALSE(CheckHeadName(unnamed.pod(), Id(unnamed), ""));
  PodBuilder v2;
  v2.RayHead("rc")
      .Name("rc-head-abcde")
      .Container("ray-head")
      .Image("rayproject/ray:2.46.0")
      .Env("RAY_enable_autoscaler_v2", "true");
  EXPECT_FALSE(CheckHeadName(v2.pod(), Id(v2), ""));
  PodBuilder worker;
  worker.RayWorker("rc").Name("rc-worker-abc").Container("ray-worker");
  EXPECT_FALSE(CheckHeadName(worker.pod(), Id(worker), ""));
}

TEST(CheckHeadName, RequestNameIsUsedWhenTheObjectHasNone) {
  PodBuilder b;
  b.RayHead("rc").Container("ray-head");
  EXPECT_TRUE(CheckHeadName(b.pod(), Id(b), "rc-head-zzz"));
  EXPECT_FALSE(CheckHeadName(b.pod(), Id(b), "rc-head"));
}

}  // namespace
}  // namespace ray_webhook
