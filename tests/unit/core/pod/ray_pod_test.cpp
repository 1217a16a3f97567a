#include "ray_webhook/core/pod/ray_pod.h"

#include <gtest/gtest.h>

#include "support/pod_builder.h"

namespace ray_webhook {
namespace {

using testing::PodBuilder;

TEST(IdentifyRayPod, WorkerAndHead) {
  PodBuilder w;
  w.RayWorker("c1", "gpu");
  auto id = IdentifyRayPod(w.pod());
  ASSERT_TRUE(id);
  EXPECT_EQ(id->node_type, RayNodeType::kWorker);
  EXPECT_EQ(id->cluster, "c1");
  EXPECT_EQ(id->group, "gpu");
  PodBuilder h;
  h.RayHead("c1");
  ASSERT_TRUE(IdentifyRayPod(h.pod()));
  EXPECT_EQ(IdentifyRayPod(h.pod())->node_type, RayNodeType::kHead);
}

TEST(IdentifyRayPod, NeedsBothLabels) {
  PodBuilder no_cluster;
  no_cluster.Label("ray.io/node-type", "worker");
  EXPECT_FALSE(IdentifyRayPod(no_cluster.pod()));
  PodBuilder empty_cluster;
  empty_cluster.Label("ray.io/node-type", "worker").Label("ray.io/cluster", "");
  EXPECT_FALSE(IdentifyRayPod(empty_cluster.pod()));
  PodBuilder no_type;
  no_type.Label("ray.io/cluster", "c");
  EXPECT_FALSE(IdentifyRayPod(no_type.pod()));
}

// KubeRay's GCS fault-tolerance cleanup Job Pod is labelled node-type=redis-cleanup.
TEST(IdentifyRayPod, RedisCleanupIsNotARayNode) {
  PodBuilder p;
  p.Label("ray.io/cluster", "c").Label("ray.io/node-type", "redis-cleanup");
  EXPECT_FALSE(IdentifyRayPod(p.pod()));
}

TEST(IsExemptFromMutation, MirrorPodsAndOptOut) {
  PodBuilder mirror;
  mirror.RayWorker("c").Annotation("kubernetes.io/config.mirror", "abc");
  EXPECT_TRUE(IsExemptFromMutation(mirror.pod()));
  PodBuilder opted;
  opted.RayWorker("c").Annotation("ray-webhook.io/skip", "true");
  EXPECT_TRUE(IsExemptFromMutation(opted.pod()));
  PodBuilder not_opted;
  not_opted.RayWorker("c").Annotation("ray-webhook.io/skip", "false");
  EXPECT_FALSE(IsExemptFromMutation(not_opted.pod()));
}

TEST(HeadServiceName, PrefersTheAddressHostOverRayIp) {
  PodBuilder p;
  p.RayWorker("c").Container("ray-worker").Arg("ray start --address=my-head:6379").Env("RAY_IP", "other");
  EXPECT_EQ(HeadServiceName(p.pod(), *IdentifyRayPod(p.pod()), "ns", "cluster.local"), "my-head");
}

TEST(HeadServiceName, ThenRayIpOfTheRayContainerThenInitContainers) {
  PodBuilder ray_ip;
  ray_ip.RayWorker("c").Container("ray-worker").Arg("ray start --address=a.b.svc:6379").Env("RAY_IP", "from-env");
  EXPECT_EQ(HeadServiceName(ray_ip.pod(), *IdentifyRayPod(ray_ip.pod()), "ns", "cluster.local"), "from-env");

  PodBuilder init;
  init.RayHead("c").Container("ray-head").InitContainer("wait").Env("RAY_IP", "from-init");
  EXPECT_EQ(HeadServiceName(init.pod(), *IdentifyRayPod(init.pod()), "ns", "cluster.local"), "from-init");
}

TEST(HeadServiceName, DefaultsToKubeRaysName) {
  PodBuilder p;
  p.RayWorker("raycluster-kuberay").Container("ray-worker").Env("RAY_IP", "$(HEAD)").Arg("--address=10.0.0.1:6379");
  EXPECT_EQ(HeadServiceName(p.pod(), *IdentifyRayPod(p.pod()), "ns", "cluster.local"), "raycluster-kuberay-head-svc");
}

// After the mutation the first address is "<svc>.<ns>.svc.<domain>"; it must
// still name <svc>, or a second call could pick another host (idempotence).
TEST(HeadServiceName, FirstAddressDecidesEvenOnceQualified) {
  PodBuilder once;
  once.RayWorker("rc")
      .Container("ray-worker")
      .Arg("ray start --address=10.0.0.1:1 --address=first:1 --address=second:2");
  EXPECT_EQ(HeadServiceName(once.pod(), *IdentifyRayPod(once.pod()), "ns", "cluster.local"), "first");
  PodBuilder twice;
  twice.RayWorker("rc")
      .Container("ray-worker")
      .Arg("ray start --address=10.0.0.1:1 --address=first.ns.svc.cluster.local:1 --address=second:2");
  EXPECT_EQ(HeadServiceName(twice.pod(), *IdentifyRayPod(twice.pod()), "ns", "cluster.local"), "first");
  PodBuilder other_ns;
  other_ns.RayWorker("rc").Container("ray-worker").Arg("ray start --address=first.other.svc.cluster.local:1");
  EXPECT_EQ(HeadServiceName(other_ns.pod(), *IdentifyRayPod(other_ns.pod()), "ns", "cluster.local"), "rc-head-svc");
}

TEST(HeadServiceFqdn, JoinsWithSvcAndDomain) {
  EXPECT_EQ(HeadServiceFqdn("h", "ns", "cluster.local"), "h.ns.svc.cluster.local");
  EXPECT_EQ(HeadServiceFqdn("h", "ns", "app.pre"), "h.ns.svc.app.pre");
}

// getRayContainerIndex in ray-operator/controllers/ray/common/pod.go, KubeRay v0.3.0 to v0.6.0.
TEST(RayContainerIndex, TheFirstContainerMarkedRayTrueElseTheFirst) {
  PodBuilder marked;
  marked.RayWorker("c")
      .Container("sidecar")
      .Env("ray", "false")
      .Container("ray-worker")
      .Env("ray", "true")
      .Container("other")
      .Env("ray", "true");
  EXPECT_EQ(RayContainerIndex(marked.pod()), 1u);
  EXPECT_EQ(RayContainer(marked.pod())->name, "ray-worker");

  PodBuilder unmarked;
  unmarked.RayWorker("c").Container("ray-worker").Container("sidecar").Env("ray", "TRUE");
  EXPECT_EQ(RayContainerIndex(unmarked.pod()), 0u) << "the value is compared exactly";

  PodBuilder none;
  none.RayWorker("c");
  EXPECT_FALSE(RayContainerIndex(none.pod()));
  EXPECT_EQ(RayContainer(none.pod()), nullptr);
}

}  // namespace
}  // namespace ray_webhook
