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
  EXPECT_EQ(std::get<std::string>(d.patch[0].value), "ray start --address=rc-head-svc.from-object.svc.cluster.local:6379");
}

TEST(PodPolicy, NoNamespaceAtAllMeansNoGuessedAddress) {
  const Decision d = Decide(PodCreate(ShortWorker(), ""), Endpoint::kMutate, Config{});
  EXPECT_TRUE(d.allowed);
  EXPECT_TRUE(d.patch.empty());
  EXPECT_EQ(d.warnings.size(), 1u);
}

PodBuilder HeadNamed(std::string name) {
  PodBuilder b;
  b.RayHead("rc").Name(std::move(name)).Container("ray-head");
  return b;
}

Config WithApi() {
  Config c;
  c.kube_api.server = "https://127.0.0.1:6443";
  return c;
}

TEST(PodPolicy, HeadLookupIsNeededOnlyForHeadCreateOnValidateWithAnApi) {
  const PodBuilder head_pod = HeadNamed("rc-head");
  const AdmissionRequest head = PodCreate(head_pod);
  EXPECT_TRUE(NeedsHeadLookup(head, Endpoint::kValidate, WithApi()));
  EXPECT_FALSE(NeedsHeadLookup(head, Endpoint::kMutate, WithApi()));
  EXPECT_FALSE(NeedsHeadLookup(head, Endpoint::kValidate, Config{}));  // no API configured
  const PodBuilder worker = ShortWorker();
  EXPECT_FALSE(NeedsHeadLookup(PodCreate(worker), Endpoint::kValidate, WithApi()));
  Config name_only = WithApi();
  name_only.head_uniqueness = {true, false};
  EXPECT_FALSE(NeedsHeadLookup(head, Endpoint::kValidate, name_only));
  Config off = WithApi();
  off.second_head_mode = RuleMode::kOff;
  EXPECT_FALSE(NeedsHeadLookup(head, Endpoint::kValidate, off));
}

TEST(PodPolicy, SecondHeadIsDeniedFromTheLookup) {
  const PodListResult heads{true, 200, {{"rc-head-old", "Running", false}}, ""};
  const PodBuilder head = HeadNamed("rc-head");
  const Decision d = Decide(PodCreate(head), Endpoint::kValidate, WithApi(), &heads);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.denial.code, 409);
}

TEST(PodPolicy, HeadUniquenessModes) {
  const PodBuilder wrong_pod = HeadNamed("rc-head-x7k2p");
  const AdmissionRequest wrong_name = PodCreate(wrong_pod);
  EXPECT_FALSE(Decide(wrong_name, Endpoint::kValidate, Config{}).allowed);
  Config lookup_only;
  lookup_only.head_uniqueness = {false, true};
  EXPECT_TRUE(Decide(wrong_name, Endpoint::kValidate, lookup_only).allowed);
  Config warn;
  warn.head_name_mode = RuleMode::kWarn;
  const Decision warned = Decide(wrong_name, Endpoint::kValidate, warn);
  EXPECT_TRUE(warned.allowed);
  EXPECT_EQ(warned.warnings.size(), 1u);
  Config off;
  off.head_name_mode = RuleMode::kOff;
  EXPECT_TRUE(Decide(wrong_name, Endpoint::kValidate, off).allowed);

  PodBuilder unnamed;
  unnamed.RayHead("rc").GenerateName("rc-head-").Container("ray-head");
  EXPECT_EQ(Decide(PodCreate(unnamed), Endpoint::kMutate, Config{}).patch.size(), 2u);
  EXPECT_TRUE(Decide(PodCreate(unnamed), Endpoint::kMutate, lookup_only).patch.empty());
  EXPECT_TRUE(Decide(PodCreate(unnamed), Endpoint::kMutate, off).patch.empty());
}

TEST(PodPolicy, DuplicateMountModes) {
  PodBuilder b = ShortWorker();
  b.Mount("a", "/x").Mount("b", "/x");
  Config warn;
  warn.duplicate_mount_mode = RuleMode::kWarn;
  const Decision d = Decide(PodCreate(b), Endpoint::kValidate, warn);
  EXPECT_TRUE(d.allowed);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].rfind("duplicate-mount (warn mode): ", 0), 0u);
  Config off;
  off.duplicate_mount_mode = RuleMode::kOff;
  const Decision quiet = Decide(PodCreate(b), Endpoint::kMutate, off);
  EXPECT_TRUE(quiet.allowed);
  EXPECT_FALSE(quiet.patch.empty());  // the mutation still runs
}

}  // namespace
}  // namespace ray_webhook
