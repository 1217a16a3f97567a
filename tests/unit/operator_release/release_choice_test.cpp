#include "ray_webhook/operator_release/release_choice.h"

#include <gtest/gtest.h>

#include <vector>

namespace ray_webhook {
namespace {

OperatorDeployment Operator(const std::string& name, const std::string& image, std::vector<std::string> args = {}) {
  OperatorDeployment d;
  d.namespace_name = "ray-system";
  d.name = name;
  d.has_operator_container = true;
  d.image = image;
  SplitImageReference(image, &d.image_tag, &d.image_has_digest);
  d.args = std::move(args);
  return d;
}

KubeRayTarget Fixed() {
  KubeRayTarget t;
  t.version = {1, 5, 1};
  return t;
}

TEST(ChooseKubeRayRelease, OneOperatorGivesItsReleaseAndGates) {
  const std::vector<OperatorDeployment> found = {
      Operator("kuberay-operator", "quay.io/kuberay/operator:v1.7.0",
               {"--log-stdout-encoder", "json", "--feature-gates=RayCronJob=true,RayJobDeletionPolicy=false"})};
  const ReleaseChoice c = ChooseKubeRayRelease(found, Fixed());
  EXPECT_EQ(c.source, ReleaseSource::kOperator);
  EXPECT_EQ(c.target.version, (KubeRayVersion{1, 7, 0}));
  EXPECT_TRUE(c.target.GateEnabled("RayCronJob"));
  EXPECT_FALSE(c.target.GateEnabled("RayJobDeletionPolicy"));
  EXPECT_EQ(c.detail,
            "KubeRay 1.7.0 from Deployment ray-system/kuberay-operator (image quay.io/kuberay/operator:v1.7.0), "
            "feature gates RayCronJob=true,RayJobDeletionPolicy=false");
}

TEST(ChooseKubeRayRelease, GoFlagSpellingsAndTheLastOneWins) {
  const std::vector<OperatorDeployment> found = {Operator(
      "op", "kuberay/operator:1.6.2", {"-feature-gates=RayCronJob=true", "--feature-gates", "RayCronJob=false"})};
  const ReleaseChoice c = ChooseKubeRayRelease(found, Fixed());
  ASSERT_EQ(c.source, ReleaseSource::kOperator) << c.detail;
  EXPECT_FALSE(c.target.GateEnabled("RayCronJob"));
  // Go's flag package stops at "--".
  const std::vector<OperatorDeployment> after = {
      Operator("op", "kuberay/operator:1.6.2", {"--", "--feature-gates=Bad"})};
  EXPECT_EQ(ChooseKubeRayRelease(after, Fixed()).source, ReleaseSource::kOperator);
}

TEST(ChooseKubeRayRelease, GatesOnTheCommandLineWinOverTheOperators) {
  KubeRayTarget fixed = Fixed();
  fixed.feature_gates["RayCronJob"] = false;
  const std::vector<OperatorDeployment> found = {
      Operator("op", "kuberay/operator:v1.7.0", {"--feature-gates=RayCronJob=true"})};
  const ReleaseChoice c = ChooseKubeRayRelease(found, fixed);
  EXPECT_EQ(c.target.version, (KubeRayVersion{1, 7, 0}));
  EXPECT_FALSE(c.target.GateEnabled("RayCronJob"));
}

TEST(ChooseKubeRayRelease, NoOperatorFallsBackToTheFixedRelease) {
  OperatorDeployment stopped = Operator("op", "kuberay/operator:v1.7.0");
  stopped.replicas = 0;
  OperatorDeployment other = Operator("apiserver", "kuberay/apiserver:v1.7.0");
  other.has_operator_container = false;
  for (const auto& found : {std::vector<OperatorDeployment>{}, std::vector<OperatorDeployment>{stopped, other}}) {
    const ReleaseChoice c = ChooseKubeRayRelease(found, Fixed());
    EXPECT_EQ(c.source, ReleaseSource::kNoOperator);
    EXPECT_EQ(c.target.version, Fixed().version);
    EXPECT_EQ(c.detail, "no KubeRay operator Deployment found; judging by the fixed release 1.5.1");
  }
}

TEST(ChooseKubeRayRelease, TwoOperatorsOfOneReleaseAgreeAndOfTwoDoNot) {
  const std::vector<OperatorDeployment> same = {Operator("a", "kuberay/operator:v1.6.2"),
                                                Operator("b", "mirror/kuberay/operator:1.6.2")};
  EXPECT_EQ(ChooseKubeRayRelease(same, Fixed()).source, ReleaseSource::kOperator);
  const std::vector<OperatorDeployment> two = {Operator("a", "kuberay/operator:v1.6.2"),
                                               Operator("b", "kuberay/operator:v1.7.0")};
  const ReleaseChoice c = ChooseKubeRayRelease(two, Fixed());
  EXPECT_EQ(c.source, ReleaseSource::kAmbiguous);
  EXPECT_EQ(c.target.version, Fixed().version);
  EXPECT_EQ(c.detail,
            "two KubeRay operators disagree: Deployment ray-system/a runs 1.6.2 [], ray-system/b runs 1.7.0 []; "
            "judging by the fixed release 1.5.1");
  const std::vector<OperatorDeployment> gates = {Operator("a", "kuberay/operator:v1.7.0"),
                                                 Operator("b", "kuberay/operator:v1.7.0", {"--feature-gates=X=true"})};
  EXPECT_EQ(ChooseKubeRayRelease(gates, Fixed()).source, ReleaseSource::kAmbiguous);
}

TEST(ChooseKubeRayRelease, ATagThatIsNoReleaseFallsBack) {
  for (const char* image : {"kuberay/operator:latest", "kuberay/operator@sha256:0123abcd", "kuberay/operator",
                            "kuberay/operator:v1.7.0-rc.1", "kuberay/operator:my-build"}) {
    const std::vector<OperatorDeployment> found = {Operator("op", image)};
    const ReleaseChoice c = ChooseKubeRayRelease(found, Fixed());
    EXPECT_EQ(c.source, ReleaseSource::kNotARelease) << image;
    EXPECT_EQ(c.target.version, Fixed().version) << image;
  }
}

TEST(ChooseKubeRayRelease, AVersionLabelThatContradictsTheTagIsAmbiguous) {
  OperatorDeployment d = Operator("op", "kuberay/operator:v1.7.0");
  d.version_label = "1.6.2";
  const std::vector<OperatorDeployment> found = {d};
  EXPECT_EQ(ChooseKubeRayRelease(found, Fixed()).source, ReleaseSource::kAmbiguous);
  d.version_label = "v1.7.0";
  const std::vector<OperatorDeployment> agreeing = {d};
  EXPECT_EQ(ChooseKubeRayRelease(agreeing, Fixed()).source, ReleaseSource::kOperator);
}

TEST(ChooseKubeRayRelease, GarbageFeatureGatesFallBack) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--feature-gates=RayCronJob"}, std::vector<std::string>{"--feature-gates=A=yes"},
        std::vector<std::string>{"--feature-gates"}}) {
    const std::vector<OperatorDeployment> found = {Operator("op", "kuberay/operator:v1.7.0", args)};
    const ReleaseChoice c = ChooseKubeRayRelease(found, Fixed());
    EXPECT_EQ(c.source, ReleaseSource::kBadFeatureGates) << args.front();
    EXPECT_EQ(c.target.version, Fixed().version);
  }
}

}  // namespace
}  // namespace ray_webhook
