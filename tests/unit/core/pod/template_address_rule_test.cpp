#include "ray_webhook/core/pod/template_address_rule.h"

#include <gtest/gtest.h>

#include "support/ray_object_builder.h"

namespace ray_webhook {
namespace {

using testing::RayObjectBuilder;

TEST(TemplateAddressRule, WhatStaysBare) {
  // The FQDN mutation qualifies these, or they are not bare.
  for (const char* qualified : {"raycluster-head-svc:6379", "head.default.svc.cluster.local:6379", "10.0.0.7:6379",
                                "[fd00::7]:6379", "localhost:6379", "$FQ_RAY_IP:6379", "${MY_HEAD}:6379", ""}) {
    EXPECT_FALSE(BareAddressReason(qualified)) << qualified;
  }
  for (const char* bare :
       {"$RAY_IP:6379", "${RAY_IP}:6379", "raycluster-head-svc", "raycluster-head-svc:$RAY_PORT", "Head_Svc:6379"}) {
    EXPECT_TRUE(BareAddressReason(bare)) << bare;
  }
  EXPECT_NE(BareAddressReason("svc:$PORT")->find("not a number"), std::string::npos);
  EXPECT_NE(BareAddressReason("svc")->find("no port"), std::string::npos);
}

TEST(TemplateAddressRule, AWorkerAddressIsNamedByGroupAndField) {
  RayObjectBuilder b("rc", RayObjectKind::kRayService);
  b.Head();
  b.Param("address", "$RAY_IP:6379");  // the head's own address is not the FQDN rule's business
  b.Worker("small");
  b.Worker("large");
  b.Param("address", "$RAY_IP:6379");
  const auto f = CheckTemplateAddresses(b.object());
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].field_path, "spec.rayClusterConfig.workerGroupSpecs[1].rayStartParams.address");
  EXPECT_NE(f[0].summary.find("\"$RAY_IP:6379\" stays a bare name"), std::string::npos) << f[0].summary;
  EXPECT_NE(f[0].detail.find("group \"large\""), std::string::npos);
}

TEST(TemplateAddressRule, NoFindingWhenKubeRayKeepsTheUsersCommand) {
  {
    RayObjectBuilder b("rc");
    b.Worker("w").Arg("ray start --address=$RAY_IP:6379 --block");
    b.Param("address", "$RAY_IP:6379");
    EXPECT_TRUE(CheckTemplateAddresses(b.object()).empty());
  }
  {
    RayObjectBuilder b("rc");
    b.Annotation("ray.io/overwrite-container-cmd", "True");
    b.Worker("w");
    b.Param("address", "$RAY_IP:6379");
    EXPECT_TRUE(CheckTemplateAddresses(b.object()).empty());
  }
  {
    RayObjectBuilder b("rc");
    b.Worker("w").Annotation("ray.io/overwrite-container-cmd", "true");
    b.Param("address", "$RAY_IP:6379");
    EXPECT_TRUE(CheckTemplateAddresses(b.object()).empty());
  }
  {
    RayObjectBuilder b("rc");
    b.Worker("w");
    b.Param("address", "$RAY_IP:6379");
    EXPECT_EQ(CheckTemplateAddresses(b.object()).size(), 1u);
  }
}

}  // namespace
}  // namespace ray_webhook
