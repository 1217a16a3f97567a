#include "ray_webhook/audit/cluster_view.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ray_webhook/audit/auditor.h"
#include "ray_webhook/audit/cost_facts.h"
#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

using nlohmann::json;
using testing::ReadFixture;

json Fixture(const std::string& name) { return json::parse(ReadFixture("audit/" + name)); }

AuditedKind KindOf(const json& object) {
  const std::string kind = object.value("kind", "");
  if (kind == "Pod") return AuditedKind::kPod;
  if (kind == "RayCluster") return AuditedKind::kRayCluster;
  if (kind == "RayJob") return AuditedKind::kRayJob;
  if (kind == "RayService") return AuditedKind::kRayService;
  return AuditedKind::kSkipped;
}

// Every item of a dump, as a list or watch hands them on: one object's text at a time.
void UpsertAll(ClusterView& view, const json& dump) {
  for (const json& item : dump["items"]) {
    const Status s = view.Upsert(KindOf(item), item.dump(), "API");
    ASSERT_TRUE(s.ok()) << s.message();
  }
}

std::vector<std::string> Rules(const AuditReport& r) {
  std::vector<std::string> out;
  for (const AuditFinding& f : r.findings) out.push_back(f.rule + " " + f.kind + " " + f.namespace_name + "/" + f.name);
  std::sort(out.begin(), out.end());
  return out;
}

const std::int64_t kNow = *ParseRfc3339("2026-12-05T10:00:00Z");

TEST(ClusterView, JudgesAsTheAuditorDoesOverTheSameObjects) {
  for (const char* name : {"clean-cluster.json", "extra-head.json", "shallow-copy.json", "cost-leaks.json"}) {
    SCOPED_TRACE(name);
    const json dump = Fixture(name);
    ClusterView view(PolicyConfig{}, CostLeakLimits{});
    UpsertAll(view, dump);
    const AuditReport live = view.Judge(kNow).report;
    Auditor auditor(PolicyConfig{});
    ASSERT_TRUE(auditor.AddDocument(dump.dump(), name).ok());
    const AuditReport once = auditor.Finish(kNow);
    EXPECT_EQ(Rules(live), Rules(once));
    EXPECT_EQ(live.findings_by_rule, once.findings_by_rule);
    EXPECT_EQ(live.pods, once.pods);
    EXPECT_EQ(live.ray_clusters, once.ray_clusters);
    EXPECT_EQ(live.clusters_with_extra_heads, once.clusters_with_extra_heads);
  }
}

std::string Field(const json& item, const json::json_pointer& at) {
  return item.contains(at) && item[at].is_string() ? item[at].get<std::string>() : std::string();
}

// The head Pods of a dump, in its order.
std::vector<json> Heads(const json& dump) {
  std::vector<json> heads;
  for (const json& item : dump["items"]) {
    if (Field(item, json::json_pointer("/metadata/labels/ray.io~1node-type")) == "head") heads.push_back(item);
  }
  return heads;
}

TEST(ClusterView, AFindingGoesWithTheObjectThatCausedIt) {
  const json dump = Fixture("extra-head.json");
  ClusterView view(PolicyConfig{}, CostLeakLimits{});
  UpsertAll(view, dump);
  ASSERT_EQ(view.Judge(kNow).report.clusters_with_extra_heads, 1u);
  // Deleting every live head but one (the watch's DELETED events) clears the finding.
  std::size_t live_removed = 0;
  for (const json& head : Heads(dump)) {
    const std::string phase = Field(head, json::json_pointer("/status/phase"));
    const bool live = !head["metadata"].contains("deletionTimestamp") && phase != "Failed" && phase != "Succeeded";
    if (!live || live_removed++ > 0) continue;
    ASSERT_TRUE(view.Remove(AuditedKind::kPod, head.dump()).ok());
  }
  const AuditReport after = view.Judge(kNow).report;
  EXPECT_EQ(after.clusters_with_extra_heads, 0u);
  EXPECT_EQ(after.findings_by_rule.count("extra-head"), 0u);
}

TEST(ClusterView, AnUpdateReplacesWhatWasKeptOfTheObject) {
  const json dump = Fixture("extra-head.json");
  ClusterView view(PolicyConfig{}, CostLeakLimits{});
  UpsertAll(view, dump);
  const std::size_t kept = view.objects();
  // A head that starts terminating (MODIFIED with a deletionTimestamp) is no longer live.
  for (json head : Heads(dump)) {
    head["metadata"]["deletionTimestamp"] = "2026-12-05T09:59:00Z";
    ASSERT_TRUE(view.Upsert(AuditedKind::kPod, head.dump(), "API").ok());
  }
  EXPECT_EQ(view.objects(), kept);
  EXPECT_EQ(view.Judge(kNow).report.clusters_with_extra_heads, 0u);
}

TEST(ClusterView, AResyncForgetsWhatTheListNoLongerHolds) {
  const json dump = Fixture("extra-head.json");
  ClusterView view(PolicyConfig{}, CostLeakLimits{});
  UpsertAll(view, dump);
  ASSERT_EQ(view.Judge(kNow).report.clusters_with_extra_heads, 1u);
  // A list after a 410: every Pod but the heads past the first, deleted while no watch ran.
  const std::vector<json> heads = Heads(dump);
  view.BeginResync(AuditedKind::kPod);
  for (const json& item : dump["items"]) {
    if (item["kind"] != "Pod") continue;
    bool later_head = false;
    for (std::size_t k = 1; k < heads.size(); ++k) later_head |= heads[k] == item;
    if (!later_head) ASSERT_TRUE(view.Upsert(AuditedKind::kPod, item.dump(), "API").ok());
  }
  view.EndResync(AuditedKind::kPod);
  const AuditReport r = view.Judge(kNow).report;
  EXPECT_EQ(r.clusters_with_extra_heads, 0u);
  // The other kinds were not listed again, and stay.
  EXPECT_EQ(r.ray_clusters, view.Judge(kNow).report.ray_clusters);
}

TEST(ClusterView, WorkerSignaturesAreKeptOncePerDistinctSpec) {
  const json dump = Fixture("shallow-copy.json");
  ClusterView view(PolicyConfig{}, CostLeakLimits{});
  UpsertAll(view, dump);
  const AuditReport r = view.Judge(kNow).report;
  ASSERT_EQ(r.findings_by_rule.count("worker-drift"), 1u);
  const std::size_t variants = view.distinct_texts();
  EXPECT_GE(variants, 2u);
  // The odd workers deleted: their signature goes with them, and so does the drift.
  for (const json& item : dump["items"]) {
    if (item["kind"] != "Pod") continue;
    for (const AuditFinding& f : r.findings) {
      if (f.rule == "worker-drift" && f.name == item["metadata"]["name"]) {
        ASSERT_TRUE(view.Remove(AuditedKind::kPod, item.dump()).ok());
      }
    }
  }
  // The named odd Pod is gone; when it was its variant's only Pod, its signature is too.
  const AuditReport after = view.Judge(kNow).report;
  if (after.findings_by_rule.count("worker-drift") == 0) EXPECT_LT(view.distinct_texts(), variants);
}

TEST(ClusterView, SaysWhenARuleOverTimeComesDue) {
  const json dump = Fixture("cost-leaks.json");
  ClusterView view(PolicyConfig{}, CostLeakLimits{});
  UpsertAll(view, dump);
  // eval-nightly ended 5 minutes before kNow; its cluster is overdue after its 60 s and the 10 m grace.
  const ClusterView::Judgement j = view.Judge(kNow);
  ASSERT_TRUE(j.next_deadline.has_value());
  EXPECT_GT(*j.next_deadline, kNow);
  const ClusterView::Judgement at = view.Judge(*j.next_deadline);
  EXPECT_EQ(at.report.findings_by_rule.at("finished-job-cluster"),
            j.report.findings_by_rule.at("finished-job-cluster") + 1);
  const ClusterView::Judgement before = view.Judge(*j.next_deadline - 1);
  EXPECT_EQ(before.report.findings_by_rule.at("finished-job-cluster"),
            j.report.findings_by_rule.at("finished-job-cluster"));
}

TEST(ClusterView, AnObjectThatCannotBeReadIsAnErrorAndForgotten) {
  const json dump = Fixture("extra-head.json");
  ClusterView view(PolicyConfig{}, CostLeakLimits{});
  UpsertAll(view, dump);
  json head = Heads(dump).front();
  const std::size_t kept = view.objects();
  head["spec"]["containers"] = "not a list";
  const Status s = view.Upsert(AuditedKind::kPod, head.dump(), "API");
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find(head["metadata"]["name"].get<std::string>()), std::string::npos) << s.message();
  EXPECT_EQ(view.objects(), kept - 1);
  EXPECT_FALSE(view.Upsert(AuditedKind::kPod, "{not json", "API").ok());
  EXPECT_FALSE(view.Upsert(AuditedKind::kPod, "[1]", "API").ok());
  EXPECT_EQ(view.objects(), kept - 1);
}

}  // namespace
}  // namespace ray_webhook
