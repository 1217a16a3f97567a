#include "ray_webhook/core/review/pod_policy.h"

#include <gtest/gtest.h>

#include "support/pod_builder.h"
#include "support/ray_object_builder.h"

namespace ray_webhook {
namespace {

using testing::PodBuilder;
using testing::RayObjectBuilder;

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
  const Decision d = Decide(PodCreate(ShortWorker()), Endpoint::kMutate, PolicyConfig{});
  EXPECT_TRUE(d.allowed);
  EXPECT_EQ(d.patch.size(), 2u);
}

TEST(PodPolicy, ValidateNeverPatches) {
  const Decision d = Decide(PodCreate(ShortWorker()), Endpoint::kValidate, PolicyConfig{});
  EXPECT_TRUE(d.allowed);
  EXPECT_TRUE(d.patch.empty());
}

TEST(PodPolicy, OnlyPodCreateIsActedOn) {
  for (const char* op : {"UPDATE", "DELETE", "CONNECT"}) {
    AdmissionRequest r = PodCreate(ShortWorker());
    r.operation = op;
    EXPECT_TRUE(Decide(r, Endpoint::kMutate, PolicyConfig{}).patch.empty()) << op;
  }
  AdmissionRequest other_kind = PodCreate(ShortWorker());
  other_kind.kind = {"apps", "v1", "Deployment"};
  EXPECT_TRUE(Decide(other_kind, Endpoint::kMutate, PolicyConfig{}).patch.empty());
  AdmissionRequest no_object = PodCreate(ShortWorker());
  no_object.pod.reset();
  EXPECT_TRUE(Decide(no_object, Endpoint::kMutate, PolicyConfig{}).allowed);
}

TEST(PodPolicy, ExemptAndNonRayPodsAreNotMutated) {
  PodBuilder opted = ShortWorker();
  opted.Annotation("ray-webhook.io/skip", "true");
  EXPECT_TRUE(Decide(PodCreate(opted), Endpoint::kMutate, PolicyConfig{}).patch.empty());
  PodBuilder plain;
  plain.Container("nginx").Arg("--address=rc-head-svc:6379");
  EXPECT_TRUE(Decide(PodCreate(plain), Endpoint::kMutate, PolicyConfig{}).patch.empty());
}

// kube-apiserver validates mount uniqueness itself before validating webhooks,
// so /mutate must deny too for the clear message to reach the user.
TEST(PodPolicy, BothEndpointsDenyDuplicateMountsWithoutPatching) {
  PodBuilder b = ShortWorker();
  b.Mount("shared-mem", "/dev/shm").Mount("shared-mem", "/dev/shm");
  for (Endpoint e : {Endpoint::kMutate, Endpoint::kValidate}) {
    const Decision d = Decide(PodCreate(b), e, PolicyConfig{});
    EXPECT_FALSE(d.allowed);
    EXPECT_TRUE(d.patch.empty());
    EXPECT_EQ(d.denial.code, 422);
  }
}

TEST(PodPolicy, DuplicateEnvWarnsOnValidateOnly) {
  PodBuilder b;
  b.RayWorker("rc").Container("ray-worker").Env("FQ_RAY_IP", "a").Env("RAY_IP", "b").Env("X", "1").Env("X", "2");
  EXPECT_EQ(Decide(PodCreate(b), Endpoint::kValidate, PolicyConfig{}).warnings.size(), 1u);
  EXPECT_TRUE(Decide(PodCreate(b), Endpoint::kMutate, PolicyConfig{}).warnings.empty());
}

TEST(PodPolicy, NamespaceFallsBackToTheObject) {
  PodBuilder b = ShortWorker();
  AdmissionRequest r = PodCreate(b, "");
  r.pod->metadata.namespace_name = "from-object";
  const Decision d = Decide(r, Endpoint::kMutate, PolicyConfig{});
  ASSERT_FALSE(d.patch.empty());
  EXPECT_EQ(std::get<std::string>(d.patch[0].value),
            "ray start --address=rc-head-svc.from-object.svc.cluster.local:6379");
}

TEST(PodPolicy, NoNamespaceAtAllMeansNoGuessedAddress) {
  const Decision d = Decide(PodCreate(ShortWorker(), ""), Endpoint::kMutate, PolicyConfig{});
  EXPECT_TRUE(d.allowed);
  EXPECT_TRUE(d.patch.empty());
  EXPECT_EQ(d.warnings.size(), 1u);
}

PodBuilder HeadNamed(std::string name) {
  PodBuilder b;
  b.RayHead("rc").Name(std::move(name)).Container("ray-head");
  return b;
}

TEST(PodPolicy, HeadLookupIsNeededOnlyForHeadCreateOnValidate) {
  const PodBuilder head_pod = HeadNamed("rc-head");
  const AdmissionRequest head = PodCreate(head_pod);
  EXPECT_TRUE(NeedsHeadLookup(head, Endpoint::kValidate, PolicyConfig{}));
  EXPECT_FALSE(NeedsHeadLookup(head, Endpoint::kMutate, PolicyConfig{}));
  const PodBuilder worker = ShortWorker();
  EXPECT_FALSE(NeedsHeadLookup(PodCreate(worker), Endpoint::kValidate, PolicyConfig{}));
  PolicyConfig name_only;
  name_only.head_uniqueness = {true, false};
  EXPECT_FALSE(NeedsHeadLookup(head, Endpoint::kValidate, name_only));
  PolicyConfig off;
  off.second_head_mode = RuleMode::kOff;
  EXPECT_FALSE(NeedsHeadLookup(head, Endpoint::kValidate, off));
}

TEST(PodPolicy, SecondHeadIsDeniedFromTheLookup) {
  const HeadPodList heads(std::vector<HeadPod>{{"rc-head-old", "Running", false}});
  const PodBuilder head = HeadNamed("rc-head");
  const Decision d = Decide(PodCreate(head), Endpoint::kValidate, PolicyConfig{}, &heads);
  EXPECT_FALSE(d.allowed);
  EXPECT_EQ(d.denial.code, 409);
}

// SecondHeadRule finds; the policy applies --second-head-mode and --head-lookup-failure.
TEST(PodPolicy, SecondHeadWarnModeAllowsWithAWarning) {
  const HeadPodList heads(std::vector<HeadPod>{{"other", "Running", false}});
  const PodBuilder head = HeadNamed("rc-head");
  PolicyConfig warn;
  warn.second_head_mode = RuleMode::kWarn;
  const Decision d = Decide(PodCreate(head), Endpoint::kValidate, warn, &heads);
  EXPECT_TRUE(d.allowed);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].rfind("second-head (warn mode): ", 0), 0u) << d.warnings[0];
}

TEST(PodPolicy, LookupFailureWarnsByDefaultAndDeniesWhenConfigured) {
  const HeadPodList failed(Status::Error("no answer from the Kubernetes API"));
  const PodBuilder head = HeadNamed("rc-head");
  const Decision warn = Decide(PodCreate(head), Endpoint::kValidate, PolicyConfig{}, &failed);
  EXPECT_TRUE(warn.allowed);
  ASSERT_EQ(warn.warnings.size(), 1u);
  EXPECT_NE(warn.warnings[0].find("could not check"), std::string::npos);
  PolicyConfig deny;
  deny.deny_on_lookup_failure = true;
  const Decision denied = Decide(PodCreate(head), Endpoint::kValidate, deny, &failed);
  EXPECT_FALSE(denied.allowed);
  EXPECT_EQ(denied.denial.code, 503);
  EXPECT_EQ(denied.denial.reason, "ServiceUnavailable");
  EXPECT_NE(denied.denial.message.find("--head-lookup-failure=deny"), std::string::npos);
  // Warn mode never denies, whatever the lookup-failure setting.
  deny.second_head_mode = RuleMode::kWarn;
  EXPECT_TRUE(Decide(PodCreate(head), Endpoint::kValidate, deny, &failed).allowed);
}

TEST(PodPolicy, HeadUniquenessModes) {
  const PodBuilder wrong_pod = HeadNamed("rc-head-x7k2p");
  const AdmissionRequest wrong_name = PodCreate(wrong_pod);
  EXPECT_FALSE(Decide(wrong_name, Endpoint::kValidate, PolicyConfig{}).allowed);
  PolicyConfig lookup_only;
  lookup_only.head_uniqueness = {false, true};
  EXPECT_TRUE(Decide(wrong_name, Endpoint::kValidate, lookup_only).allowed);
  PolicyConfig warn;
  warn.head_name_mode = RuleMode::kWarn;
  const Decision warned = Decide(wrong_name, Endpoint::kValidate, warn);
  EXPECT_TRUE(warned.allowed);
  EXPECT_EQ(warned.warnings.size(), 1u);
  PolicyConfig off;
  off.head_name_mode = RuleMode::kOff;
  EXPECT_TRUE(Decide(wrong_name, Endpoint::kValidate, off).allowed);

  PodBuilder unnamed;
  unnamed.RayHead("rc").GenerateName("rc-head-").Container("ray-head");
  EXPECT_EQ(Decide(PodCreate(unnamed), Endpoint::kMutate, PolicyConfig{}).patch.size(), 2u);
  EXPECT_TRUE(Decide(PodCreate(unnamed), Endpoint::kMutate, lookup_only).patch.empty());
  EXPECT_TRUE(Decide(PodCreate(unnamed), Endpoint::kMutate, off).patch.empty());
}

TEST(PodPolicy, DuplicateMountModes) {
  PodBuilder b = ShortWorker();
  b.Mount("a", "/x").Mount("b", "/x");
  PolicyConfig warn;
  warn.duplicate_mount_mode = RuleMode::kWarn;
  const Decision d = Decide(PodCreate(b), Endpoint::kValidate, warn);
  EXPECT_TRUE(d.allowed);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].rfind("duplicate-mount (warn mode): ", 0), 0u);
  PolicyConfig off;
  off.duplicate_mount_mode = RuleMode::kOff;
  const Decision quiet = Decide(PodCreate(b), Endpoint::kMutate, off);
  EXPECT_TRUE(quiet.allowed);
  EXPECT_FALSE(quiet.patch.empty());  // the mutation still runs
}

// A ray.io write: the RayObject is copied in, its views still point into the builder.
AdmissionRequest RayWrite(RayObjectBuilder& b, std::string_view op = "CREATE") {
  AdmissionRequest r;
  r.uid = "u";
  r.kind = {"ray.io", "v1", RayObjectKindName(b.object().kind)};
  r.operation = op;
  r.namespace_name = "default";
  r.name = b.object().metadata.name;
  r.ray_object = b.object();
  return r;
}

// Two duplicate paths in two worker groups.
void TwoDuplicates(RayObjectBuilder& b) {
  b.Head();
  b.Worker("a").Mount("x", "/x").Mount("y", "/x/");
  b.Worker("b").Mount("dshm", "/dev/shm/");
}

TEST(PodPolicy, RayObjectDuplicateMountsAreDeniedWithEveryFinding) {
  RayObjectBuilder b("rc");
  TwoDuplicates(b);
  const Decision d = Decide(RayWrite(b), Endpoint::kValidate, PolicyConfig{});
  ASSERT_FALSE(d.allowed);
  EXPECT_EQ(d.denial.code, 422);
  EXPECT_EQ(d.denial.rule, "duplicate-mount");
  EXPECT_EQ(d.denial.message.rfind("RayCluster \"rc\": group \"a\"", 0), 0u) << d.denial.message;
  EXPECT_NE(d.denial.message.find("; group \"b\""), std::string::npos);
  EXPECT_NE(d.denial.message.find("Each mountPath must be unique"), std::string::npos);
  // The mutating webhook never sees ray.io objects; if it did, it would leave them alone.
  const Decision m = Decide(RayWrite(b), Endpoint::kMutate, PolicyConfig{});
  EXPECT_TRUE(m.allowed);
  EXPECT_TRUE(m.patch.empty());
  EXPECT_TRUE(m.warnings.empty());
  // DELETE and CONNECT are not acted on.
  EXPECT_TRUE(Decide(RayWrite(b, "DELETE"), Endpoint::kValidate, PolicyConfig{}).allowed);
}

TEST(PodPolicy, RayObjectFindingsInWarnModeAreOneWarningEach) {
  RayObjectBuilder b("rc");
  TwoDuplicates(b);
  PolicyConfig warn;
  warn.duplicate_mount_mode = RuleMode::kWarn;
  const Decision d = Decide(RayWrite(b), Endpoint::kValidate, warn);
  EXPECT_TRUE(d.allowed);
  ASSERT_EQ(d.warnings.size(), 2u);
  EXPECT_EQ(d.warnings[0].rfind("duplicate-mount (warn mode): spec.workerGroupSpecs[0].template.spec.containers[0]", 0),
            0u)
      << d.warnings[0];
  for (const std::string& w : d.warnings) EXPECT_LE(w.size(), 120u * 4) << w;
  PolicyConfig off;
  off.duplicate_mount_mode = RuleMode::kOff;
  const Decision quiet = Decide(RayWrite(b), Endpoint::kValidate, off);
  EXPECT_TRUE(quiet.allowed);
  EXPECT_TRUE(quiet.warnings.empty());
}

// Never a denial: that would refuse the long-named clusters whose heads the head-name mutation names safely.
TEST(PodPolicy, RayObjectLongNameIsAHeadNameWarning) {
  RayObjectBuilder b(std::string(46, 's'), RayObjectKind::kRayService);
  b.Head();
  for (RuleMode mode : {RuleMode::kEnforce, RuleMode::kWarn}) {
    PolicyConfig config;
    config.head_name_mode = mode;
    const Decision d = Decide(RayWrite(b), Endpoint::kValidate, config);
    EXPECT_TRUE(d.allowed);
    ASSERT_EQ(d.warnings.size(), 1u);
    EXPECT_EQ(d.warnings[0].rfind("head-name: metadata.name: RayService name of 46 characters", 0), 0u)
        << d.warnings[0];
    EXPECT_FALSE(d.warnings[0].ends_with("...")) << d.warnings[0];
  }
  PolicyConfig off;
  off.head_name_mode = RuleMode::kOff;
  EXPECT_TRUE(Decide(RayWrite(b), Endpoint::kValidate, off).warnings.empty());
  PolicyConfig lookup_only;
  lookup_only.head_uniqueness.name = false;
  EXPECT_TRUE(Decide(RayWrite(b), Endpoint::kValidate, lookup_only).warnings.empty());
  // The name cannot change after CREATE.
  EXPECT_TRUE(Decide(RayWrite(b, "UPDATE"), Endpoint::kValidate, PolicyConfig{}).warnings.empty());
}

TEST(PodPolicy, RayObjectUpdateCountsOnlyNewFindings) {
  RayObjectBuilder before("rc");
  before.Head();
  before.Worker("a").Mount("x", "/x").Mount("y", "/x/");
  RayObjectBuilder after("rc");
  TwoDuplicates(after);
  AdmissionRequest same = RayWrite(before, "UPDATE");
  same.old_ray_object = before.object();
  EXPECT_TRUE(Decide(same, Endpoint::kValidate, PolicyConfig{}).allowed);
  AdmissionRequest worse = RayWrite(after, "UPDATE");
  worse.old_ray_object = before.object();
  const Decision d = Decide(worse, Endpoint::kValidate, PolicyConfig{});
  ASSERT_FALSE(d.allowed);
  EXPECT_EQ(d.denial.message.find("group \"a\""), std::string::npos) << d.denial.message;
  EXPECT_NE(d.denial.message.find("group \"b\""), std::string::npos);
  // Without the old object every finding counts.
  EXPECT_FALSE(Decide(RayWrite(before, "UPDATE"), Endpoint::kValidate, PolicyConfig{}).allowed);
}

TEST(PodPolicy, RayObjectBareAddressesAreWarnings) {
  RayObjectBuilder b("rc");
  b.Head();
  b.Worker("w");
  b.Param("address", "${RAY_IP}:6379");
  const Decision d = Decide(RayWrite(b), Endpoint::kValidate, PolicyConfig{});
  EXPECT_TRUE(d.allowed);
  ASSERT_EQ(d.warnings.size(), 1u);
  EXPECT_EQ(d.warnings[0].rfind("bare-address: spec.workerGroupSpecs[0].rayStartParams.address: ", 0), 0u)
      << d.warnings[0];
}

// /admit: /mutate's patch and /validate's verdict in one answer.
TEST(PodPolicy, AdmitPatchesAsMutateAndWarnsAsValidate) {
  PodBuilder b = ShortWorker();
  b.Env("X", "1").Env("X", "2");
  const Decision mutate = Decide(PodCreate(b), Endpoint::kMutate, PolicyConfig{});
  const Decision admit = Decide(PodCreate(b), Endpoint::kAdmit, PolicyConfig{});
  EXPECT_TRUE(admit.allowed);
  ASSERT_EQ(admit.patch.size(), mutate.patch.size());
  for (std::size_t i = 0; i < admit.patch.size(); ++i) EXPECT_EQ(admit.patch[i].path, mutate.patch[i].path);
  EXPECT_EQ(admit.mutations, mutate.mutations);
  EXPECT_EQ(admit.warnings, Decide(PodCreate(b), Endpoint::kValidate, PolicyConfig{}).warnings);
  ASSERT_EQ(admit.warnings.size(), 1u);
}

TEST(PodPolicy, AdmitLooksUpHeadsAndJudgesTheNameItSets) {
  PodBuilder unnamed;
  unnamed.RayHead("rc").GenerateName("rc-head-").Container("ray-head");
  const AdmissionRequest head = PodCreate(unnamed);
  EXPECT_TRUE(NeedsHeadLookup(head, Endpoint::kAdmit, PolicyConfig{}));
  const HeadPodList none(std::vector<HeadPod>{});
  const Decision first = Decide(head, Endpoint::kAdmit, PolicyConfig{}, &none);
  EXPECT_TRUE(first.allowed);
  EXPECT_EQ(first.patch.size(), 2u);  // the fixed name, generateName removed
  // A live head already there: refused, and the refusal carries no patch.
  const HeadPodList other(std::vector<HeadPod>{{"rc-head-old", "Running", false}});
  const Decision second = Decide(head, Endpoint::kAdmit, PolicyConfig{}, &other);
  EXPECT_FALSE(second.allowed);
  EXPECT_EQ(second.denial.code, 409);
  EXPECT_TRUE(second.patch.empty());
  EXPECT_TRUE(second.mutations.empty());
  // Reinvoked after another webhook's change, the head is named already and is not its own rival.
  const HeadPodList itself(std::vector<HeadPod>{{"rc-head", "Pending", false}});
  const Decision again = Decide(PodCreate(HeadNamed("rc-head")), Endpoint::kAdmit, PolicyConfig{}, &itself);
  EXPECT_TRUE(again.allowed);
  EXPECT_TRUE(again.patch.empty());
}

// What /validate would see after kube-apiserver named the Pod, /admit sees before.
TEST(PodPolicy, AdmitRefusesTheHeadNamesValidateRefuses) {
  EXPECT_EQ(Decide(PodCreate(HeadNamed("rc-head-x7k2p")), Endpoint::kAdmit, PolicyConfig{}).denial.code, 403);
  PodBuilder exempt;
  exempt.RayHead("rc").GenerateName("rc-head-").Annotation("ray-webhook.io/skip", "true").Container("ray-head");
  const Decision unnamed = Decide(PodCreate(exempt), Endpoint::kAdmit, PolicyConfig{});
  EXPECT_FALSE(unnamed.allowed);
  EXPECT_EQ(unnamed.denial.rule, "head-name");
  EXPECT_NE(unnamed.denial.message.find("\"rc-head-<random>\""), std::string::npos) << unnamed.denial.message;
  PolicyConfig lookup_only;
  lookup_only.head_uniqueness = {false, true};
  EXPECT_TRUE(Decide(PodCreate(exempt), Endpoint::kAdmit, lookup_only).allowed);
}

TEST(PodPolicy, AdmitDeniesDuplicateMountsAndChecksRayObjects) {
  PodBuilder b = ShortWorker();
  b.Mount("shared-mem", "/dev/shm").Mount("shared-mem", "/dev/shm/");
  const Decision pod = Decide(PodCreate(b), Endpoint::kAdmit, PolicyConfig{});
  EXPECT_FALSE(pod.allowed);
  EXPECT_TRUE(pod.patch.empty());
  RayObjectBuilder rc("rc");
  TwoDuplicates(rc);
  EXPECT_EQ(Decide(RayWrite(rc), Endpoint::kAdmit, PolicyConfig{}).denial.rule, "duplicate-mount");
}

}  // namespace
}  // namespace ray_webhook
