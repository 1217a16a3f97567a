#include "core/spec/tls_domain_warning.h"

#include <gtest/gtest.h>

#include "spec_dom.h"

namespace ray_webhook {
namespace {

using nlohmann::json;

json ClusterWithTls(bool enabled) {
  return {{"apiVersion", "ray.io/v1"},
          {"kind", "RayCluster"},
          {"spec", {{"tlsOptions", {{"enabled", enabled}}}, {"headGroupSpec", json::object()}}}};
}

// The warning over the object as ParsedObject would parse it.
std::optional<std::string> Warning(const json& object, RayObjectKind kind, const PolicyConfig& policy) {
  return TlsDomainWarning(testing::SpecDom(object).Root(), kind, policy);
}

PolicyConfig Policy(std::string domain, KubeRayVersion version, bool mtls_gate) {
  PolicyConfig p;
  p.cluster_domain = std::move(domain);
  p.kuberay.version = version;
  p.kuberay.feature_gates["RayClusterMTLS"] = mtls_gate;
  return p;
}

TEST(TlsDomainWarning, WarnsWhenTheDomainIsNotTheOperatorsDefault) {
  const auto warning =
      Warning(ClusterWithTls(true), RayObjectKind::kRayCluster, Policy("corp.example", {1, 7, 0}, true));
  ASSERT_TRUE(warning);
  EXPECT_EQ(warning->rfind("tls-cluster-domain: spec.tlsOptions.enabled: ", 0), 0u) << *warning;
  EXPECT_NE(warning->find("CLUSTER_DOMAIN=corp.example"), std::string::npos) << *warning;
}

TEST(TlsDomainWarning, SilentOtherwise) {
  EXPECT_FALSE(Warning(ClusterWithTls(true), RayObjectKind::kRayCluster, Policy("cluster.local", {1, 7, 0}, true)));
  EXPECT_FALSE(Warning(ClusterWithTls(false), RayObjectKind::kRayCluster, Policy("corp.example", {1, 7, 0}, true)));
  EXPECT_FALSE(Warning(ClusterWithTls(true), RayObjectKind::kRayCluster, Policy("corp.example", {1, 7, 0}, false)))
      << "the operator makes no certificate with its gate off";
  EXPECT_FALSE(Warning(ClusterWithTls(true), RayObjectKind::kRayCluster, Policy("corp.example", {1, 6, 2}, true)));
}

TEST(TlsDomainWarning, ReadsTheClusterAnObjectCarries) {
  const json job = {
      {"apiVersion", "ray.io/v1"}, {"kind", "RayJob"}, {"spec", {{"rayClusterSpec", ClusterWithTls(true)["spec"]}}}};
  const auto warning = Warning(job, RayObjectKind::kRayJob, Policy("corp.example", {1, 7, 0}, true));
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("spec.rayClusterSpec.tlsOptions.enabled"), std::string::npos) << *warning;
}

}  // namespace
}  // namespace ray_webhook
