#include "ray_webhook/core/pod/fqdn_mutation.h"

#include <gtest/gtest.h>

#include "support/pod_builder.h"

namespace ray_webhook {
namespace {

using testing::PodBuilder;

PatchValue Str(const char* s) { return std::string(s); }

Decision Plan(const PodBuilder& b, std::string_view ns = "default", std::string domain = "cluster.local") {
  Decision d;
  PlanFqdnMutation(b.pod(), *IdentifyRayPod(b.pod()), ns, domain, d);
  return d;
}

const PatchOperation* FindOp(const Decision& d, std::string_view path) {
  for (const auto& op : d.patch) {
    if (op.path == path) return &op;
  }
  return nullptr;
}

TEST(FqdnMutation, WorkerGetsEnvAppendedAndAddressRewritten) {
  PodBuilder b;
  b.RayWorker("rc").Container("ray-worker").Arg("ray start --address=rc-head-svc:6379 --block").Env("RAY_PORT", "6379");
  const Decision d = Plan(b, "team-a");
  ASSERT_EQ(d.patch.size(), 3u);
  EXPECT_EQ(d.patch[0].op, "replace");
  EXPECT_EQ(d.patch[0].path, "/spec/containers/0/args/0");
  EXPECT_EQ(d.patch[0].value, Str("ray start --address=rc-head-svc.team-a.svc.cluster.local:6379 --block"));
  EXPECT_EQ(d.patch[1].op, "add");
  EXPECT_EQ(d.patch[1].path, "/spec/containers/0/env/-");
  EXPECT_EQ(d.patch[1].value, PatchValue(EnvEntry{"FQ_RAY_IP", "rc-head-svc.team-a.svc.cluster.local"}));
  EXPECT_EQ(d.patch[2].value, PatchValue(EnvEntry{"RAY_IP", "rc-head-svc"}));
}

TEST(FqdnMutation, ClusterDomainComesFromConfig) {
  PodBuilder b;
  b.RayWorker("rc").Container("ray-worker").EmptyEnvList();
  const Decision d = Plan(b, "ns", "app.pre");
  ASSERT_FALSE(d.patch.empty());
  EXPECT_EQ(std::get<EnvEntry>(d.patch[0].value).value, "rc-head-svc.ns.svc.app.pre");
}

TEST(FqdnMutation, MissingEnvListIsCreatedNotReplaced) {
  PodBuilder b;
  b.RayWorker("rc").Container("ray-worker");
  const Decision d = Plan(b);
  ASSERT_EQ(d.patch.size(), 1u);
  EXPECT_EQ(d.patch[0].op, "add");
  EXPECT_EQ(d.patch[0].path, "/spec/containers/0/env");
  const auto& list = std::get<std::vector<EnvEntry>>(d.patch[0].value);
  ASSERT_EQ(list.size(), 2u);
  EXPECT_EQ(list[0].name, "FQ_RAY_IP");
  EXPECT_EQ(list[1].name, "RAY_IP");
}

TEST(FqdnMutation, ExistingEntriesWinWhateverTheirValue) {
  PodBuilder b;
  b.RayWorker("rc").Container("ray-worker").EnvFrom("FQ_RAY_IP").Env("RAY_IP", "custom");
  EXPECT_TRUE(Plan(b).patch.empty());
  PodBuilder only_fq;
  only_fq.RayWorker("rc").Container("ray-worker").EnvFrom("FQ_RAY_IP");
  const Decision d = Plan(only_fq);
  ASSERT_EQ(d.patch.size(), 1u);
  EXPECT_EQ(std::get<EnvEntry>(d.patch[0].value).name, "RAY_IP");
}

TEST(FqdnMutation, ShortRayAddressIsRewrittenInPlace) {
  PodBuilder b;
  b.RayWorker("rc")
      .Container("ray-worker")
      .Env("RAY_ADDRESS", "rc-head-svc:6379")
      .Env("FQ_RAY_IP", "x")
      .Env("RAY_IP", "rc-head-svc");
  const Decision d = Plan(b);
  ASSERT_EQ(d.patch.size(), 1u);
  EXPECT_EQ(d.patch[0].op, "replace");
  EXPECT_EQ(d.patch[0].path, "/spec/containers/0/env/0/value");
  EXPECT_EQ(d.patch[0].value, Str("rc-head-svc.default.svc.cluster.local:6379"));
}

TEST(FqdnMutation, AddressInCommandElements) {
  PodBuilder b;
  b.RayWorker("rc")
      .Container("ray-worker")
      .Command("ray")
      .Command("start")
      .Command("--address=rc-head-svc:6379")
      .EmptyEnvList();
  const Decision d = Plan(b);
  const PatchOperation* op = FindOp(d, "/spec/containers/0/command/2");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->value, Str("--address=rc-head-svc.default.svc.cluster.local:6379"));
}

TEST(FqdnMutation, InitContainersGetEnvButKeepTheirCommands) {
  PodBuilder b;
  b.RayWorker("rc").Container("ray-worker").Env("FQ_RAY_IP", "a").Env("RAY_IP", "b");
  b.InitContainer("wait-gcs-ready").Arg("ray health-check --address rc-head-svc:6379");
  b.InitContainer("user-init").Env("FQ_RAY_IP", "keep");
  const Decision d = Plan(b);
  ASSERT_EQ(d.patch.size(), 2u);
  EXPECT_EQ(d.patch[0].path, "/spec/initContainers/0/env");
  EXPECT_EQ(d.patch[1].path, "/spec/initContainers/1/env/-");
  EXPECT_EQ(std::get<EnvEntry>(d.patch[1].value).name, "RAY_IP");
}

// KubeRay gives the head Ray container neither variable: it reaches GCS on localhost.
TEST(FqdnMutation, HeadRayContainerAndSidecarsAreUntouched) {
  PodBuilder b;
  b.RayHead("rc").Container("ray-head").Arg("ray start --head").Container("autoscaler");
  EXPECT_TRUE(Plan(b).patch.empty());
  PodBuilder w;
  w.RayWorker("rc")
      .Container("ray-worker")
      .Env("FQ_RAY_IP", "a")
      .Env("RAY_IP", "b")
      .Container("sidecar")
      .Arg("x --address=rc-head-svc:6379");
  EXPECT_TRUE(Plan(w).patch.empty());
}

TEST(FqdnMutation, TwoBareHostsOnlyTheFirstIsTheHeadAndTheResultIsStable) {
  PodBuilder b;
  b.RayWorker("rc").Container("ray-worker").Arg("ray start --address=first:1 --address=second:2").Env("RAY_IP", "$(X)");
  const Decision d = Plan(b);
  ASSERT_FALSE(d.patch.empty());
  EXPECT_EQ(d.patch[0].value, Str("ray start --address=first.default.svc.cluster.local:1 --address=second:2"));
  PodBuilder after;
  after.RayWorker("rc")
      .Container("ray-worker")
      .Arg(std::get<std::string>(d.patch[0].value))
      .Env("RAY_IP", "$(X)")
      .Env("FQ_RAY_IP", "first.default.svc.cluster.local");
  EXPECT_TRUE(Plan(after).patch.empty());
}

// The operator's generated command, as convertParamMap spaces it (pod.go:1518@v1.7.0), and args[0] built from it.
constexpr const char* kGenerated = "ray start  --address=rc-head-svc:6379  --block ";
constexpr const char* kQualified = "ray start  --address=rc-head-svc.default.svc.cluster.local:6379  --block ";

TEST(FqdnMutation, GeneratedStartCommandIsQualifiedAsArgsZeroIs) {
  PodBuilder b;
  b.RayWorker("rc")
      .Container("ray-worker")
      .Arg(std::string("ulimit -n 65536; ") + kGenerated)
      .Env("FQ_RAY_IP", "rc-head-svc.default.svc.cluster.local")
      .Env("RAY_IP", "rc-head-svc")
      .Env("KUBERAY_GEN_RAY_START_CMD", kGenerated);
  const Decision d = Plan(b);
  ASSERT_EQ(d.patch.size(), 2u);
  EXPECT_EQ(d.patch[0].path, "/spec/containers/0/args/0");
  EXPECT_EQ(d.patch[0].value, PatchValue(std::string("ulimit -n 65536; ") + kQualified));
  EXPECT_EQ(d.patch[1].op, "replace");
  EXPECT_EQ(d.patch[1].path, "/spec/containers/0/env/2/value");
  EXPECT_EQ(d.patch[1].value, Str(kQualified));
  EXPECT_EQ(d.mutations,
            (std::vector<Mutation>{Mutation::kAddressRewritten, Mutation::kGeneratedStartCommandRewritten}));
}

TEST(FqdnMutation, GeneratedStartCommandInTheCommandTextIsQualifiedToo) {
  PodBuilder b;
  b.RayWorker("rc")
      .Container("ray-worker")
      .Command("/bin/bash")
      .Command("-c")
      .Command(std::string("ulimit -n 65536; ") + kGenerated)
      .Env("FQ_RAY_IP", "a")
      .Env("RAY_IP", "b")
      .Env("KUBERAY_GEN_RAY_START_CMD", kGenerated);
  const Decision planned = Plan(b);  // op points into it
  const PatchOperation* op = FindOp(planned, "/spec/containers/0/env/2/value");
  ASSERT_NE(op, nullptr);
  EXPECT_EQ(op->value, Str(kQualified));
}

// Already qualified (the operator's default, setMissingRayStartParams), or an env whose text the args do not hold
// (ray.io/overwrite-container-cmd), or a count that the rewrite would change: the env stays as written.
TEST(FqdnMutation, GeneratedStartCommandIsLeftAloneUnlessItFollowsTheArgs) {
  PodBuilder qualified;
  qualified.RayWorker("rc")
      .Container("ray-worker")
      .Arg(std::string("ulimit -n 65536; ") + kQualified)
      .Env("FQ_RAY_IP", "a")
      .Env("RAY_IP", "b")
      .Env("KUBERAY_GEN_RAY_START_CMD", kQualified);
  EXPECT_TRUE(Plan(qualified).patch.empty());

  PodBuilder elsewhere;
  elsewhere.RayWorker("rc")
      .Container("ray-worker")
      .Arg("ray start --address=rc-head-svc:6379 --block --num-cpus=2")
      .Env("FQ_RAY_IP", "a")
      .Env("RAY_IP", "b")
      .Env("KUBERAY_GEN_RAY_START_CMD", kGenerated);
  const Decision d = Plan(elsewhere);
  ASSERT_EQ(d.patch.size(), 1u);
  EXPECT_EQ(d.patch[0].path, "/spec/containers/0/args/0");

  // Once bare and once qualified already: qualifying the env would make its text occur twice.
  PodBuilder twice;
  twice.RayWorker("rc")
      .Container("ray-worker")
      .Arg(std::string(kGenerated) + "; " + kQualified)
      .Env("FQ_RAY_IP", "a")
      .Env("RAY_IP", "b")
      .Env("KUBERAY_GEN_RAY_START_CMD", kGenerated);
  EXPECT_EQ(FindOp(Plan(twice), "/spec/containers/0/env/2/value"), nullptr);

  PodBuilder value_from;
  value_from.RayWorker("rc")
      .Container("ray-worker")
      .Arg(kGenerated)
      .Env("FQ_RAY_IP", "a")
      .Env("RAY_IP", "b")
      .EnvFrom("KUBERAY_GEN_RAY_START_CMD");
  EXPECT_EQ(Plan(value_from).patch.size(), 1u);
}

// KubeRay's webhook reads the first entry of the name (slices.IndexFunc), so that is the one qualified.
TEST(FqdnMutation, OnlyTheFirstGeneratedStartCommandEntryIsQualified) {
  PodBuilder b;
  b.RayWorker("rc")
      .Container("ray-worker")
      .Arg(kGenerated)
      .Env("KUBERAY_GEN_RAY_START_CMD", kGenerated)
      .Env("KUBERAY_GEN_RAY_START_CMD", kGenerated)
      .Env("FQ_RAY_IP", "a")
      .Env("RAY_IP", "b");
  const Decision d = Plan(b);
  EXPECT_NE(FindOp(d, "/spec/containers/0/env/0/value"), nullptr);
  EXPECT_EQ(FindOp(d, "/spec/containers/0/env/1/value"), nullptr);
}

TEST(FqdnMutation, MutationsAreRecordedForMetrics) {
  PodBuilder b;
  b.RayWorker("rc").Container("ray-worker").Arg("--address=rc-head-svc:1").Env("RAY_ADDRESS", "rc-head-svc:1");
  const Decision d = Plan(b);
  EXPECT_EQ(d.mutations, (std::vector<Mutation>{Mutation::kAddressRewritten, Mutation::kRayAddressRewritten,
                                                Mutation::kFqRayIpAdded, Mutation::kRayIpAdded}));
}

}  // namespace
}  // namespace ray_webhook
