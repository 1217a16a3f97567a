#include "ray_webhook/core/pod/duplicate_mount_rule.h"

#include <gtest/gtest.h>

#include "support/pod_builder.h"

namespace ray_webhook {
namespace {

using testing::PodBuilder;

TEST(CleanMountPath, NormalisesSlashesAndDots) {
  EXPECT_EQ(CleanMountPath("/dev/shm"), "/dev/shm");
  EXPECT_EQ(CleanMountPath("/dev/shm/"), "/dev/shm");
  EXPECT_EQ(CleanMountPath("//dev//shm///"), "/dev/shm");
  EXPECT_EQ(CleanMountPath("/dev/./shm"), "/dev/shm");
  EXPECT_EQ(CleanMountPath("/"), "/");
  EXPECT_EQ(CleanMountPath("/a/../b"), "/a/../b");
  EXPECT_EQ(CleanMountPath("rel/x/"), "rel/x");
}

TEST(DuplicateMountRule, UniquePathsPass) {
  PodBuilder b;
  b.Container("a").Mount("v1", "/data").Mount("v2", "/data2").Mount("v3", "/data/sub");
  EXPECT_FALSE(CheckDuplicateMounts(b.pod(), std::nullopt));
}

// The same path in two different containers is fine: uniqueness is per container.
TEST(DuplicateMountRule, SamePathInTwoContainersPasses) {
  PodBuilder b;
  b.Container("a").Mount("v", "/data").Container("b").Mount("v", "/data");
  EXPECT_FALSE(CheckDuplicateMounts(b.pod(), std::nullopt));
}

// KubeRay #688: "/dev/shm: must be unique" from a shallow-copied worker template (#714).
TEST(DuplicateMountRule, RayWorkerMessageNamesClusterGroupAndCause) {
  PodBuilder b;
  b.RayWorker("raycluster-kuberay", "workergroup")
      .Container("ray-worker")
      .Mount("shared-mem", "/dev/shm")
      .Mount("shared-mem", "/dev/shm");
  const auto denial = CheckDuplicateMounts(b.pod(), IdentifyRayPod(b.pod()));
  ASSERT_TRUE(denial);
  EXPECT_EQ(denial->code, 422);
  EXPECT_EQ(denial->rule, kDuplicateMountRule);
  const std::string& m = denial->message;
  EXPECT_NE(m.find("container \"ray-worker\" mounts \"/dev/shm\" 2 times"), std::string::npos) << m;
  EXPECT_NE(m.find("RayCluster \"raycluster-kuberay\""), std::string::npos) << m;
  EXPECT_NE(m.find("group \"workergroup\""), std::string::npos) << m;
  EXPECT_NE(m.find("shallow copy"), std::string::npos) << m;
}

// ray-operator/controllers/ray/common/pod.go (v1.6.2) AddRayTokenVolume: the mount is skipped only when
// one is named ray-token, so a user's mount at the same path under another name collides.
TEST(DuplicateMountRule, TokenAuthsMountIsBlamedOnTokenAuth) {
  PodBuilder b;
  b.RayWorker("c", "g")
      .Container("ray-worker")
      .Mount("my-token", "/var/run/secrets/ray.io/serviceaccount/")
      .Mount("ray-token", "/var/run/secrets/ray.io/serviceaccount");
  const std::string m = CheckDuplicateMounts(b.pod(), IdentifyRayPod(b.pod()))->message;
  EXPECT_NE(m.find("Kubernetes token authentication (spec.authOptions)"), std::string::npos) << m;
  EXPECT_NE(m.find("name your mount ray-token"), std::string::npos) << m;
  EXPECT_EQ(m.find("shallow copy"), std::string::npos) << m;
}

// pod.go (v1.6.2) addEmptyDir: ray-logs is skipped only when a mount at exactly "/tmp/ray" exists (checkIfVolumeMounted
// compares mountPath as written), so "/tmp/ray/" under any name collides with it and the advice is the path.
TEST(DuplicateMountRule, LogVolumeAndMtlsAreBlamedOnWhatAddsThem) {
  PodBuilder logs;
  logs.RayHead("c").Container("ray-head").Mount("my-logs", "/tmp/ray/").Mount("ray-logs", "/tmp/ray");
  const std::string m = CheckDuplicateMounts(logs.pod(), IdentifyRayPod(logs.pod()))->message;
  EXPECT_NE(m.find("autoscaler sidecar or the history-server collector"), std::string::npos) << m;
  EXPECT_NE(m.find("write the path as \"/tmp/ray\""), std::string::npos) << m;
  EXPECT_EQ(m.find("by volume name"), std::string::npos) << m;
  PodBuilder tls;
  tls.RayWorker("c", "g").Container("ray-worker").Mount("certs", "/etc/ray/tls").Mount("ray-tls", "/etc/ray/tls");
  const std::string t = CheckDuplicateMounts(tls.pod(), IdentifyRayPod(tls.pod()))->message;
  EXPECT_NE(t.find("mTLS (spec.tlsOptions"), std::string::npos) << t;
}

// pod.go:178@v1.7.0 configureEmbeddedFT appends gcs-storage at /data/gcs to the head whatever it mounts there;
// utils/validation.go:360@v1.7.0 compares the path as written, so "/data/gcs/" reaches the Pod.
TEST(DuplicateMountRule, EmbeddedGcsStorageIsBlamedOnTheHeadOnly) {
  PodBuilder head;
  head.RayHead("c").Container("ray-head").Mount("my-pvc", "/data/gcs/").Mount("gcs-storage", "/data/gcs");
  const std::string m = CheckDuplicateMounts(head.pod(), IdentifyRayPod(head.pod()))->message;
  EXPECT_NE(m.find("KubeRay 1.7 mounts its embedded GCS storage (gcs-storage) at /data/gcs on the head"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("GCSFaultToleranceEmbeddedStorage"), std::string::npos) << m;
  EXPECT_EQ(m.find("no volume KubeRay adds itself"), std::string::npos) << m;
  // The same names on a worker are the template's: KubeRay mounts the store on the head alone.
  PodBuilder worker;
  worker.RayWorker("c", "g").Container("ray-worker").Mount("my-pvc", "/data/gcs").Mount("gcs-storage", "/data/gcs");
  const std::string w = CheckDuplicateMounts(worker.pod(), IdentifyRayPod(worker.pod()))->message;
  EXPECT_EQ(w.find("embedded GCS storage"), std::string::npos) << w;
  EXPECT_NE(w.find("no volume KubeRay adds itself is among the duplicates"), std::string::npos) << w;
}

// pod.go:872-874@v1.7.0: with RayClusterHistoryServer, ray-logs at /tmp/ray on the collector sidecar as well.
TEST(DuplicateMountRule, LogVolumeOnTheHistoryCollectorIsBlamedOnTheHistoryServer) {
  PodBuilder b;
  b.RayWorker("c", "g")
      .Container("ray-worker")
      .Mount("ray-logs", "/tmp/ray")
      .Container("ray-history-collector")
      .Mount("my-logs", "/tmp/ray/")
      .Mount("ray-logs", "/tmp/ray");
  const std::string m = CheckDuplicateMounts(b.pod(), IdentifyRayPod(b.pod()))->message;
  EXPECT_NE(m.find("container \"ray-history-collector\" mounts \"/tmp/ray\" 2 times"), std::string::npos) << m;
  EXPECT_NE(m.find("feature gate RayClusterHistoryServer"), std::string::npos) << m;
  EXPECT_NE(m.find("on the collector sidecar \"ray-history-collector\""), std::string::npos) << m;
  EXPECT_EQ(m.find("autoscaler"), std::string::npos) << m;
  // In another container the log volume keeps its general cause.
  PodBuilder other;
  other.RayHead("c").Container("autoscaler").Mount("my-logs", "/tmp/ray/").Mount("ray-logs", "/tmp/ray");
  const std::string o = CheckDuplicateMounts(other.pod(), IdentifyRayPod(other.pod()))->message;
  EXPECT_NE(o.find("autoscaler sidecar or the history-server collector"), std::string::npos) << o;
  EXPECT_EQ(o.find("feature gate RayClusterHistoryServer"), std::string::npos) << o;
}

TEST(DuplicateMountRule, ADuplicateOfUnknownOriginSaysSoInsteadOfGuessing) {
  PodBuilder b;
  b.RayWorker("c", "g").Container("ray-worker").Mount("a", "/data").Mount("b", "/data");
  const std::string m = CheckDuplicateMounts(b.pod(), IdentifyRayPod(b.pod()))->message;
  EXPECT_NE(m.find("no volume KubeRay adds itself is among the duplicates"), std::string::npos) << m;
  EXPECT_EQ(m.find("shallow copy"), std::string::npos) << m;
  EXPECT_EQ(m.find("KubeRay #688"), std::string::npos) << m;
  // A known one and an unknown one: both said, each once.
  PodBuilder mixed;
  mixed.RayWorker("c", "g")
      .Container("ray-worker")
      .Mount("shared-mem", "/dev/shm")
      .Mount("dshm", "/dev/shm")
      .Mount("a", "/data")
      .Mount("b", "/data");
  const std::string both = CheckDuplicateMounts(mixed.pod(), IdentifyRayPod(mixed.pod()))->message;
  EXPECT_NE(both.find("shallow copy"), std::string::npos) << both;
  EXPECT_NE(both.find("no volume KubeRay adds itself is among the other duplicates"), std::string::npos) << both;
}

TEST(DuplicateMountRule, NonRayMessageHasNoRayCause) {
  PodBuilder b;
  b.InitContainer("setup").Mount("a", "/data").Mount("b", "/data/").Mount("c", "/data");
  const auto denial = CheckDuplicateMounts(b.pod(), std::nullopt);
  ASSERT_TRUE(denial);
  EXPECT_NE(denial->message.find("init container \"setup\" mounts \"/data\" 3 times (volumes \"a\", \"b\", \"c\")"),
            std::string::npos)
      << denial->message;
  EXPECT_EQ(denial->message.find("RayCluster"), std::string::npos);
}

TEST(DuplicateMountRule, EphemeralContainersAreChecked) {
  PodBuilder b;
  b.EphemeralContainer("debugger").Mount("x", "/cache").Mount("y", "/cache");
  ASSERT_TRUE(CheckDuplicateMounts(b.pod(), std::nullopt));
}

TEST(DuplicateMountRule, EveryDuplicateIsReportedUpToABound) {
  PodBuilder b;
  b.Container("a");
  for (int i = 0; i < 8; ++i) b.Mount("v", "/p" + std::to_string(i)).Mount("w", "/p" + std::to_string(i));
  const auto denial = CheckDuplicateMounts(b.pod(), std::nullopt);
  ASSERT_TRUE(denial);
  EXPECT_NE(denial->message.find("\"/p0\""), std::string::npos);
  EXPECT_NE(denial->message.find("\"/p4\""), std::string::npos);
  EXPECT_EQ(denial->message.find("\"/p5\""), std::string::npos);
  EXPECT_NE(denial->message.find("and 3 more duplicated paths"), std::string::npos) << denial->message;
}

}  // namespace
}  // namespace ray_webhook
