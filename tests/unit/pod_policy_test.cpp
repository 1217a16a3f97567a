#include "ray_webhook/pod_policy.h"

#include <gtest/gtest.h>

#include "pod_builder.h"

namespace ray_webhook {
namespace {

using testing::PodBuilder;

AdmissionRequest PodCreate(const PodBuilder& b, std::string_view ns = "default") {
  AdmissionRequest r;
  r.uid = "u";
  r.kind = {"", "v1", "Pod"};
  r.operation = "CREATE";
  r.namespace_name = ns;
  r.pod = b.pod();
  return r;
}

PodBuilder ShortWorker() {
  PodBuilder b;
  b.RayWorker("rc").Container("ray-worker").Arg("ray start --address=rc-head-svc:6379");
  return b;
}

TEST(PodPolicy, MutateFixesAShortAddressWorker) {
  const Decision d = Decide(PodCreate(ShortWorker()), Endpoint::kMutate, Config{});
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.patch.size(), 2u);
}

TEST(PodPolicy, ValidateNeverPatches) {
  const Decision d = Decide(PodCreate(ShortWorker()), Endpoint::kValidate, Config{});
  EXPECT_TRUE(d.allowed);
  EXPECT_TRUE(d.patch.empty());
}

TEST(PodPolicy, OnlyPodCreateIsActedOn) {
  for (const char* op : {"UPDATE", "DELETE", "CONNECT"}) {
    AdmissionRequest r = PodCreate(ShortWorker());
    r.operation = op;
    EXPECT_TRUE(Decide(r, Endpoint::kMutate, Config{}).patch.empty()) << op;
  }
  AdmissionRequest other_kind = PodCreate(ShortWorker());
  other_kind.kind = {"apps", "v1", "Deployment"};
  EXPECT_TRUE(Decide(other_kind, Endpoint::kMutate, Config{}).patch.empty());
  AdmissionRequest no_object = PodCreate(ShortWorker());
  no_object.pod.reset();
  EXPECT_TRUE(Decide(no_object, Endpoint::kMutate, Config{}).allowed);
}

TEST(PodPolicy, ExemptAndNonRayPodsAreNotMutated) {
  PodBuilder opted = ShortWorker();
  opted.Annotation("ray-webhook.io/skip", "true");
  EXPECT_TRUE(Decide(PodCreate(opted), Endpoint::kMutate, Config{}).patch.empty());
  PodBuilder plain;
  plain.Container("nginx").Arg("--address=rc-head-svc:6379");
  EXPECT_TRUE(Decide(PodCreate(plain), Endpoint::kMutate, Config{}).patch.empty());
}

// kube-apiserver validates mount uniqueness itself before validating webhooks,
// so /mutate must deny too for the clear message to reach the user.
TEST(PodPolicy, BothEndpointsDenyDuplicateMountsWithoutPatching) {
  PodBuilder b = ShortWorker();
  b.Mount("shared-mem", "/dev/shm").Mount("shared-mem", "/dev/shm");
  for (Endpoint e : {Endpoint::kMutate, Endpoint::kValidate}) {
    const Decision d = Decide(PodCreate(b), e, Config{});
    EXPECT_FALSE(d.allowed);
    EXPECT_TRUE(d.patch.empty());
    EXPECT_EQ(d.denial.code, 422);
  }
}

TEST(PodPolicy, DuplicateEnvWarnsOnValidateOnly) {
  PodBuilder b;
  b.RayWorker("rc").Container("ray-worker").Env("FQ_RAY_IP", "a").Env("RAY_IP", "b").Env("X", "1").Env("X", "2");
  EXPECT_EQ(Decide(PodCreate(b), Endpoint::kValidate, Config{}).warnings.size(), 1u);
  EXPECT_TRUE(Decide(PodCreate(b), Endpoint::kMutate, Config{}).warnings.empty());
}

TEST(PodPolicy, NamespaceFallsBackToTheObject) {
  PodBuilder b = ShortWorker();
  AdmissionRequest r = PodCreate(b, "");
  r.pod->metadata.namespace_name = "from-object";
  const Decision d = Decide(r, Endpoint::kMutate, Config{});
  ASSERT_FALSE(d.patch.empty());
  EXPECT_EQ(d.patch[0].value, "ray start --address=rc-head-svc.from-object.svc.cluster.local:6379");
}

TEST(PodPolicy, NoNamespaceAtAllMeansNoGuessedAddress) {
  const Decision d = Decide(PodCreate(ShortWorker(), ""), Endpoint::kMutate, Config{});
  EXPECT_TRUE(d.allowed);
  EXPECT_TRUE(d.patch.empty());
  EXPECT_EQ(d.warnings.size(), 1u);
}

}  // namespace
}  // namespace ray_webhook
