#include "ray_webhook/core/pod/template_mount_rule.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "support/ray_object_builder.h"

namespace ray_webhook {
namespace {

using testing::PodBuilder;
using testing::RayObjectBuilder;

std::vector<TemplateFinding> Check(RayObjectBuilder& b) { return CheckTemplateMounts(b.object()); }

TEST(TemplateMountRule, ATemplateKubeRayCanBuildHasNoFinding) {
  RayObjectBuilder b("rc");
  b.Head().Mount("data", "/data");
  b.Worker("workergroup").Mount("dshm", "/dev/shm").Mount("data", "/data");
  EXPECT_TRUE(Check(b).empty());
}

TEST(TemplateMountRule, ADuplicateInTheTemplateNamesGroupFieldAndCause) {
  RayObjectBuilder b("rc");
  b.Head();
  b.Worker("cpu");
  b.Worker("gpu").Mount("data", "/data").Mount("cache", "/cache").Mount("data-copy", "/data/");
  const auto f = Check(b);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field_path, "spec.workerGroupSpecs[1].template.spec.containers[0].volumeMounts[2]");
  EXPECT_NE(f[0].summary.find("container \"ray-worker\" would mount \"/data\" 2 times"), std::string::npos)
      << f[0].summary;
  EXPECT_NE(f[0].detail.find("group \"gpu\" (spec.workerGroupSpecs[1]"), std::string::npos) << f[0].detail;
  EXPECT_NE(f[0].detail.find("the template itself"), std::string::npos);
}

TEST(TemplateMountRule, SharedMemIsAddedUnlessExactlyDevShmIsMounted) {
  {
    RayObjectBuilder b("rc");
    b.Worker("w").Mount("dshm", "/dev/shm/");
    const auto f = Check(b);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].field_path, "spec.workerGroupSpecs[0].template.spec.containers[0].volumeMounts[0]");
    EXPECT_NE(f[0].summary.find("\"dshm\", \"shared-mem\" added by KubeRay"), std::string::npos) << f[0].summary;
    EXPECT_NE(f[0].detail.find("write the path as \"/dev/shm\""), std::string::npos);
  }
  {
    RayObjectBuilder b("rc");
    b.Worker("w").Mount("dshm", "/dev/shm");  // the operator skips its own mount
    EXPECT_TRUE(Check(b).empty());
  }
  {
    RayObjectBuilder b("rc");
    b.Worker("w").Mount("dshm", "/dev/shm/");
    b.Param("plasma-directory", "/tmp/plasma");  // no /dev/shm mount at all (v1.6.0)
    EXPECT_TRUE(Check(b).empty());
  }
}

TEST(TemplateMountRule, OnlyTheRayContainerGetsKubeRaysMounts) {
  RayObjectBuilder b("rc");
  b.Worker("w").Container("sidecar").Mount("dshm", "/dev/shm/");
  EXPECT_TRUE(Check(b).empty());
}

TEST(TemplateMountRule, RayTokenIsSkippedOnlyForAMountNamedRayToken) {
  {
    RayObjectBuilder b("rc");
    b.TokenAuth();
    b.Worker("w").Mount("sa", "/var/run/secrets/ray.io/serviceaccount");
    const auto f = Check(b);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_NE(f[0].detail.find("name your mount ray-token"), std::string::npos) << f[0].detail;
  }
  {
    RayObjectBuilder b("rc");
    b.TokenAuth();
    b.Worker("w").Mount("ray-token", "/var/run/secrets/ray.io/serviceaccount");
    EXPECT_TRUE(Check(b).empty());
  }
  {
    RayObjectBuilder b("rc");
    b.TokenAuth(/*k8s_tokens=*/false);  // a Secret's token: no volume
    b.Worker("w").Mount("sa", "/var/run/secrets/ray.io/serviceaccount");
    EXPECT_TRUE(Check(b).empty());
  }
}

TEST(TemplateMountRule, RayLogsOnlyInTheHeadOfAnAutoscalingCluster) {
  {
    RayObjectBuilder b("rc");
    b.Autoscaling();
    b.Head().Mount("logs", "/tmp/ray/");
    b.Worker("w").Mount("logs", "/tmp/ray/");
    const auto f = Check(b);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].field_path, "spec.headGroupSpec.template.spec.containers[0].volumeMounts[0]");
    EXPECT_NE(f[0].detail.find("group \"headgroup\""), std::string::npos);
    EXPECT_NE(f[0].detail.find("enableInTreeAutoscaling"), std::string::npos);
  }
  {
    RayObjectBuilder b("rc");
    b.Head().Mount("logs", "/tmp/ray/");  // no autoscaler, no ray-logs
    EXPECT_TRUE(Check(b).empty());
  }
  {
    RayObjectBuilder b("rc");
    b.Autoscaling();
    b.Head().Mount("logs", "/tmp/ray");
    EXPECT_TRUE(Check(b).empty());
  }
}

TEST(TemplateMountRule, TheAutoscalerSidecarGetsItsOwnMountsBeforeAutoscalerOptions) {
  {
    RayObjectBuilder b("rc");
    b.Autoscaling().AutoscalerMount("logs", "/tmp/ray/");
    b.Head();
    const auto f = Check(b);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].field_path, "spec.autoscalerOptions.volumeMounts[0]");
    EXPECT_NE(f[0].summary.find("container \"autoscaler\""), std::string::npos) << f[0].summary;
  }
  {
    // Named ray-token or not, the sidecar's own ray-token is already there.
    RayObjectBuilder b("rc", RayObjectKind::kRayService);
    b.Autoscaling().TokenAuth().AutoscalerMount("ray-token", "/var/run/secrets/ray.io/serviceaccount");
    b.Head();
    const auto f = Check(b);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].field_path, "spec.rayClusterConfig.autoscalerOptions.volumeMounts[0]");
    EXPECT_NE(f[0].detail.find("before it appends autoscalerOptions.volumeMounts"), std::string::npos) << f[0].detail;
  }
  {
    RayObjectBuilder b("rc");
    b.AutoscalerMount("logs", "/tmp/ray/");  // without autoscaling there is no sidecar
    b.Head();
    EXPECT_TRUE(Check(b).empty());
  }
}

TEST(TemplateMountRule, RayTlsIsSkippedForItsNameOrExactPath) {
  {
    RayObjectBuilder b("rc");
    b.Tls();
    b.Worker("w").Mount("certs", "/etc/ray/tls/");
    const auto f = Check(b);
    ASSERT_EQ(f.size(), 1u);
    EXPECT_NE(f[0].detail.find("spec.tlsOptions"), std::string::npos);
  }
  for (auto [volume, path] : {std::pair{"certs", "/etc/ray/tls"}, std::pair{"ray-tls", "/etc/ray/tls/"}}) {
    RayObjectBuilder b("rc");
    b.Tls();
    b.Worker("w").Mount(volume, path);
    EXPECT_TRUE(Check(b).empty()) << volume << " " << path;
  }
}

TEST(TemplateMountRule, PathsFollowTheKindOfObject) {
  RayObjectBuilder job("job", RayObjectKind::kRayJob);
  job.Worker("w").InitContainer("fetch").Mount("a", "/x").Mount("b", "/x");
  const auto f = CheckTemplateMounts(job.object());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field_path, "spec.rayClusterSpec.workerGroupSpecs[0].template.spec.initContainers[0].volumeMounts[1]");
  EXPECT_NE(f[0].summary.find("init container \"fetch\""), std::string::npos);
}

// A hostile object gets a bounded answer quickly: at most 100 findings, each naming five volumes.
TEST(TemplateMountRule, ManyMountsGetABoundedAnswer) {
  RayObjectBuilder b("rc");
  PodBuilder& w = b.Worker("w");
  for (int i = 0; i < 20000; ++i) w.Mount("v" + std::to_string(i), "/z/" + std::to_string(i % 10000));
  for (int i = 0; i < 50000; ++i) w.Mount("same" + std::to_string(i), "/same");
  const auto f = Check(b);
  ASSERT_EQ(f.size(), kMaxTemplateMountFindings);
  const auto same = std::find_if(
      f.begin(), f.end(), [](const TemplateFinding& x) { return x.summary.find("\"/same\"") != std::string::npos; });
  ASSERT_NE(same, f.end());
  EXPECT_NE(same->summary.find("50000 times"), std::string::npos);
  EXPECT_NE(same->summary.find("and 49995 more)"), std::string::npos) << same->summary;
  EXPECT_LT(same->detail.size(), 2000u);
  EXPECT_EQ(same->field_path, "spec.workerGroupSpecs[0].template.spec.containers[0].volumeMounts[69999]");
}

}  // namespace
}  // namespace ray_webhook
