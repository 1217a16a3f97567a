#include "cli/audit_output.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ray_webhook {
namespace {

AuditReport Report() {
  AuditReport r;
  r.pods = 3;
  r.ray_clusters = 1;
  r.skipped_objects = 2;
  r.clusters_with_extra_heads = 1;
  r.findings.push_back({"extra-head", "RayCluster", "ns1", "rc", "",
                        std::string(30, 'a') + " " + std::string(90, 'b') + " end", "dump.json document 1"});
  r.findings_by_rule["extra-head"] = 1;
  return r;
}

TEST(AuditOutput, TheTableHasARowPerFindingItsMessageWrappedAndASummary) {
  const std::string t = AuditTable(Report());
  EXPECT_EQ(t,
            "RULE        KIND        NAMESPACE  NAME  FIELD\n"
            "extra-head  RayCluster  ns1        rc    -\n"
            "    " +
                std::string(30, 'a') +
                "\n"
                "    " +
                std::string(90, 'b') +
                " end\n"
                "\n"
                "Read 3 Pods, 1 RayCluster, 0 RayJobs, 0 RayServices, 0 RayCronJobs (2 other objects skipped); 1 "
                "finding: extra-head 1.\n");
}

TEST(AuditOutput, ACleanReportSaysSo) {
  AuditReport r;
  r.pods = 1;
  r.notes.push_back("rayjobs: not served");
  EXPECT_EQ(
      AuditTable(r),
      "note: rayjobs: not served\nRead 1 Pod, 0 RayClusters, 0 RayJobs, 0 RayServices, 0 RayCronJobs; no findings.\n");
}

TEST(AuditOutput, JsonHasEveryRuleAndTheFindings) {
  const nlohmann::json j = nlohmann::json::parse(AuditJson(Report()));
  EXPECT_EQ(j["summary"]["findings"], 1);
  EXPECT_EQ(j["summary"]["rayClustersWithExtraHeads"], 1);
  EXPECT_EQ(j["summary"]["findingsByRule"].size(), AuditRuleNames().size());
  EXPECT_EQ(j["summary"]["findingsByRule"]["extra-head"], 1);
  EXPECT_EQ(j["summary"]["findingsByRule"]["worker-drift"], 0);
  EXPECT_EQ(j["summary"]["read"]["pods"], 3);
  EXPECT_EQ(j["findings"][0]["source"], "dump.json document 1");
  EXPECT_EQ(j["findings"][0]["fieldPath"], "");
}

}  // namespace
}  // namespace ray_webhook
