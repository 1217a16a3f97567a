#include "ray_webhook/audit/policy_report.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

AuditReport TwoNamespaces() {
  AuditReport r;
  r.findings.push_back({"extra-head", "RayCluster", "team-b", "rc", "", "2 live heads", "API"});
  r.findings.push_back({"duplicate-mount", "Pod", "team-a", "rc-worker-x", "spec.containers[0].volumeMounts[1]",
                        "mounted twice", "API"});
  r.findings.push_back({"raycluster-gcs-ft-redis", "RayCluster", "team-a", "rc", "spec", "needs Redis", "API"});
  r.findings.push_back({"bare-address", "Pod", "", "loose", "", "bare name", "file.yaml document 1"});
  return r;
}

TEST(PolicyReports, OneReportPerNamespaceSortedWithOneFailedResultPerFinding) {
  const auto reports = PolicyReports(TwoNamespaces(), ReportApi::kOpenReports, 1796000000);
  ASSERT_EQ(reports.size(), 3u);
  EXPECT_EQ(reports[0]["metadata"]["namespace"], "default");  // no namespace: where kubectl would put it
  EXPECT_EQ(reports[1]["metadata"]["namespace"], "team-a");
  EXPECT_EQ(reports[2]["metadata"]["namespace"], "team-b");
  const nlohmann::json& a = reports[1];
  EXPECT_EQ(a["apiVersion"], "openreports.io/v1alpha1");
  EXPECT_EQ(a["kind"], "Report");
  EXPECT_EQ(a["metadata"]["name"], "ray-webhook-audit");
  EXPECT_EQ(a["metadata"]["labels"]["app.kubernetes.io/managed-by"], "ray-webhook");
  EXPECT_EQ(a["source"], "ray-webhook");
  EXPECT_EQ(a["summary"], nlohmann::json({{"pass", 0}, {"fail", 2}, {"warn", 0}, {"error", 0}, {"skip", 0}}));
  ASSERT_EQ(a["results"].size(), 2u);
  const nlohmann::json& mount = a["results"][0];
  EXPECT_EQ(mount["policy"], "ray-webhook");
  EXPECT_EQ(mount["rule"], "duplicate-mount");
  EXPECT_EQ(mount["result"], "fail");
  EXPECT_EQ(mount["severity"], "high");
  EXPECT_EQ(mount["scored"], true);
  EXPECT_EQ(mount["message"], "mounted twice");
  EXPECT_EQ(mount["timestamp"], nlohmann::json({{"seconds", 1796000000}, {"nanos", 0}}));
  EXPECT_EQ(mount["resources"],
            nlohmann::json::parse(R"([{"apiVersion":"v1","kind":"Pod","namespace":"team-a","name":"rc-worker-x"}])"));
  EXPECT_EQ(mount["properties"]["fieldPath"], "spec.containers[0].volumeMounts[1]");
  EXPECT_EQ(a["results"][1]["resources"][0]["apiVersion"], "ray.io/v1");
  EXPECT_EQ(a["results"][1]["severity"], "high");  // a KubeRay spec check: the operator refuses it
  const nlohmann::json& head = reports[2]["results"][0];
  EXPECT_EQ(head["severity"], "critical");
  EXPECT_FALSE(head.contains("properties"));  // a finding about the whole object
}

TEST(PolicyReports, ThePolicyWorkingGroupsApiHasNoReportLevelSource) {
  const auto reports = PolicyReports(TwoNamespaces(), ReportApi::kWgPolicy, 1);
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports[0]["apiVersion"], "wgpolicyk8s.io/v1alpha2");
  EXPECT_EQ(reports[0]["kind"], "PolicyReport");
  EXPECT_FALSE(reports[0].contains("source"));
  EXPECT_EQ(reports[0]["results"][0]["source"], "ray-webhook");
}

TEST(PolicyReports, NoFindingsNoReports) {
  EXPECT_TRUE(PolicyReports(AuditReport{}, ReportApi::kOpenReports, 1).empty());
}

TEST(PolicyReports, ApisAndSeverities) {
  EXPECT_EQ(ParseReportApi("openreports.io/v1alpha1"), ReportApi::kOpenReports);
  EXPECT_EQ(ParseReportApi("wgpolicyk8s.io/v1alpha2"), ReportApi::kWgPolicy);
  EXPECT_EQ(ParseReportApi("wgpolicyk8s.io/v1beta1"), std::nullopt);
  EXPECT_EQ(ReportApiOf(ReportApi::kWgPolicy).resource, "policyreports");
  for (std::string_view rule : AuditRuleNames()) {
    const std::string_view s = SeverityOfRule(rule);
    EXPECT_TRUE(s == "critical" || s == "high" || s == "medium" || s == "low") << rule << ": " << s;
  }
}

}  // namespace
}  // namespace ray_webhook
