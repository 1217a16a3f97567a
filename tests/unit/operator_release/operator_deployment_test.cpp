#include "ray_webhook/operator_release/operator_deployment.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace ray_webhook {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(RAY_WEBHOOK_FIXTURES) + "/operator_release/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(OperatorDeployment, TheHelmChartsDeploymentGivesItsImageTagAndArgs) {
  Result<OperatorDeployment> d = ReadOperatorDeployment(Fixture("helm-v1.6.2.json"));
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_EQ(d->Id(), "ray-system/kuberay-operator");
  EXPECT_TRUE(d->has_operator_container);
  EXPECT_EQ(d->image, "quay.io/kuberay/operator:v1.6.2");
  EXPECT_EQ(d->image_tag, "v1.6.2");
  EXPECT_FALSE(d->image_has_digest);
  EXPECT_EQ(d->replicas, 1);
  ASSERT_FALSE(d->args.empty());
  EXPECT_EQ(d->args.back(),
            "--feature-gates=RayClusterStatusConditions=true,RayJobDeletionPolicy=true,RayMultiHostIndexing=true,"
            "RayServiceIncrementalUpgrade=false,RayCronJob=false");
}

TEST(OperatorDeployment, TheKustomizeManifestsDeploymentIsFoundByItsContainerName) {
  Result<OperatorDeployment> d = ReadOperatorDeployment(Fixture("kustomize-v1.6.2.json"));
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_TRUE(d->has_operator_container);
  EXPECT_EQ(d->image_tag, "v1.6.2");
  EXPECT_EQ(d->args, std::vector<std::string>{"--feature-gates=RayClusterStatusConditions=true"});
}

TEST(OperatorDeployment, AContainerNamedOtherwiseIsTheOperatorByItsImage) {
  Result<OperatorDeployment> d = ReadOperatorDeployment(R"({"metadata":{"name":"op","namespace":"x",
    "labels":{"app.kubernetes.io/version":"1.7.0"}},"spec":{"replicas":2,"template":{"spec":{"containers":[
    {"name":"sidecar","image":"envoy:1.30"},{"name":"manager","image":"registry:5000/mirror/kuberay-operator:v1.7.0",
    "args":["--feature-gates","A=true"]}]}}}})");
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_TRUE(d->has_operator_container);
  EXPECT_EQ(d->image, "registry:5000/mirror/kuberay-operator:v1.7.0");
  EXPECT_EQ(d->version_label, "1.7.0");
  EXPECT_EQ(d->replicas, 2);
  EXPECT_EQ(d->args, (std::vector<std::string>{"--feature-gates", "A=true"}));
}

TEST(OperatorDeployment, ADeploymentOfAnotherProgramHasNoOperatorContainer) {
  Result<OperatorDeployment> d = ReadOperatorDeployment(R"({"metadata":{"name":"apiserver","namespace":"x"},
    "spec":{"template":{"spec":{"containers":[{"name":"kuberay-apiserver","image":"quay.io/kuberay/apiserver:v1.6.2"}]}}}})");
  ASSERT_TRUE(d.ok()) << d.error();
  EXPECT_FALSE(d->has_operator_container);
}

TEST(OperatorDeployment, WrongTypesAreErrorsNamingTheField) {
  EXPECT_EQ(ReadOperatorDeployment("[]").error(), "not a JSON object");
  EXPECT_EQ(ReadOperatorDeployment("{").error().rfind("not valid JSON", 0), 0u);
  EXPECT_EQ(ReadOperatorDeployment(R"({"spec":{"replicas":"1"}})").error(), "spec.replicas: expected an integer");
  EXPECT_EQ(ReadOperatorDeployment(R"({"spec":{"template":{"spec":{"containers":[{"name":"kuberay-operator",
    "image":"op:v1.6.2","args":"--feature-gates=A=true"}]}}}})")
                .error(),
            "spec.template.spec.containers[0].args: expected a list");
  EXPECT_EQ(ReadOperatorDeployment(R"({"metadata":{"labels":{"app.kubernetes.io/version":1}}})").error(),
            "metadata.labels[app.kubernetes.io/version]: expected a string");
}

TEST(SplitImageReference, TagsDigestsAndRegistryPorts) {
  std::string tag;
  bool digest = false;
  SplitImageReference("quay.io/kuberay/operator:v1.6.2", &tag, &digest);
  EXPECT_EQ(tag, "v1.6.2");
  EXPECT_FALSE(digest);
  SplitImageReference("quay.io/kuberay/operator@sha256:0123abcd", &tag, &digest);
  EXPECT_EQ(tag, "");
  EXPECT_TRUE(digest);
  SplitImageReference("quay.io/kuberay/operator:v1.6.2@sha256:0123abcd", &tag, &digest);
  EXPECT_EQ(tag, "v1.6.2");
  EXPECT_TRUE(digest);
  SplitImageReference("registry:5000/kuberay/operator", &tag, &digest);
  EXPECT_EQ(tag, "");
  EXPECT_FALSE(digest);
}

}  // namespace
}  // namespace ray_webhook
