#include "ray_webhook/audit/auditor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <nlohmann/json.hpp>

#include "ray_webhook/audit/cost_facts.h"
#include "support/fixture_files.h"

namespace ray_webhook {
namespace {

using nlohmann::json;
using testing::ReadFixture;

json Fixture(const std::string& name) { return json::parse(ReadFixture("audit/" + name)); }

// The Auditor reads JSON text: the documents built here are written out as kubectl would.
AuditReport Audit(const std::vector<json>& documents, PolicyConfig policy = {}) {
  Auditor auditor(policy);
  std::size_t n = 0;
  for (const json& d : documents) {
    Status s = auditor.AddDocument(d.dump(), "test document " + std::to_string(++n));
    EXPECT_TRUE(s.ok()) << s.message();
  }
  return auditor.Finish();
}

std::vector<const AuditFinding*> Of(const AuditReport& report, std::string_view rule) {
  std::vector<const AuditFinding*> out;
  for (const AuditFinding& f : report.findings) {
    if (f.rule == rule) out.push_back(&f);
  }
  return out;
}

bool Has(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

TEST(Auditor, ACleanClusterHasNoFindings) {
  const AuditReport r = Audit({Fixture("clean-cluster.json")});
  EXPECT_EQ(r.total_findings(), 0u) << (r.findings.empty() ? "" : r.findings[0].rule + ": " + r.findings[0].message);
  EXPECT_EQ(r.pods, 3u);
  EXPECT_EQ(r.ray_clusters, 1u);
  EXPECT_EQ(r.clusters_with_extra_heads, 0u);
}

TEST(Auditor, ASecondLiveHeadIsAnExtraHeadAndTerminatingOrFailedOnesAreNot) {
  const AuditReport r = Audit({Fixture("extra-head.json")});
  const auto extra = Of(r, kExtraHeadRule);
  ASSERT_EQ(extra.size(), 1u);
  EXPECT_EQ(r.clusters_with_extra_heads, 1u);
  EXPECT_EQ(extra[0]->kind, "RayCluster");
  EXPECT_EQ(extra[0]->namespace_name, "ns1");
  EXPECT_EQ(extra[0]->name, "raycluster-sample");
  EXPECT_TRUE(Has(extra[0]->message, "has 2 live head Pods")) << extra[0]->message;
  EXPECT_TRUE(Has(extra[0]->message, "\"raycluster-sample-head-x7k2p\" (Pending)")) << extra[0]->message;
  EXPECT_FALSE(Has(extra[0]->message, "old01"));
  EXPECT_FALSE(Has(extra[0]->message, "f41l3"));
  // The extra head is also not under the deterministic name; the terminating and failed ones are not judged.
  const auto named = Of(r, "head-name");
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0]->name, "raycluster-sample-head-x7k2p");
  EXPECT_EQ(named[0]->field_path, "metadata.name");
  EXPECT_EQ(r.total_findings(), 2u);
  EXPECT_EQ(r.pods, 6u);
}

TEST(Auditor, HeadsOfTheSameNameInOtherNamespacesAreOtherClusters) {
  json a = Fixture("clean-cluster.json");
  json b = a;
  for (json& item : b["items"]) item["metadata"]["namespace"] = "ns2";
  const AuditReport r = Audit({a, b});
  EXPECT_TRUE(Of(r, kExtraHeadRule).empty());
}

TEST(Auditor, ShallowCopiedWorkersDifferFromTheirSiblings) {
  const AuditReport r = Audit({Fixture("shallow-copy.json")});
  // Workers 2 and 3 mount /dev/shm two and three times: duplicate mounts, and two odd variants.
  EXPECT_EQ(Of(r, "duplicate-mount").size(), 2u);
  const auto drift = Of(r, kWorkerDriftRule);
  ASSERT_EQ(drift.size(), 2u);
  EXPECT_EQ(drift[0]->kind, "Pod");
  EXPECT_EQ(drift[0]->name, "raycluster-kuberay-worker-workergroup-8wm2n");
  EXPECT_EQ(drift[0]->field_path, "spec.containers[0].volumeMounts[2] (added)");
  EXPECT_TRUE(Has(drift[0]->message, "of group \"workergroup\" of RayCluster \"raycluster-kuberay\""))
      << drift[0]->message;
  EXPECT_TRUE(Has(drift[0]->message, "#688")) << drift[0]->message;
  EXPECT_EQ(drift[1]->name, "raycluster-kuberay-worker-workergroup-c6t9x");
  // KubeRay 0.4 wrote bare head addresses: every worker would still be mutated.
  EXPECT_EQ(Of(r, "unmutated").size(), 3u);
}

TEST(Auditor, PerPodFieldsAreNotDrift) {
  // clean-cluster.json's two workers differ in name, uid, node, token volume, status and creation time.
  const AuditReport r = Audit({Fixture("clean-cluster.json")});
  EXPECT_TRUE(Of(r, kWorkerDriftRule).empty());
}

TEST(Auditor, ATemplateEditedSinceIsDriftNamingTheField) {
  json dump = Fixture("clean-cluster.json");
  dump["items"][3]["spec"]["containers"][0]["image"] = "rayproject/ray:2.47.0";
  const AuditReport r = Audit({dump});
  const auto drift = Of(r, kWorkerDriftRule);
  ASSERT_EQ(drift.size(), 1u);
  EXPECT_EQ(drift[0]->field_path, "spec.containers[0].image (changed)");
}

TEST(Auditor, TemplateRulesRunOnRayObjects) {
  Auditor auditor({});
  json cluster = json::parse(ReadFixture("reviews/raycluster-dupmount-shm.json"))["request"]["object"];
  ASSERT_TRUE(auditor.AddDocument(cluster.dump(), "x").ok());
  const AuditReport r = auditor.Finish();
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].rule, "duplicate-mount");
  EXPECT_EQ(r.findings[0].kind, "RayCluster");
  EXPECT_EQ(r.findings[0].field_path, "spec.workerGroupSpecs[1].template.spec.containers[0].volumeMounts[1]");
  EXPECT_EQ(r.ray_clusters, 1u);
}

TEST(Auditor, ARuleTurnedOffReportsNothing) {
  PolicyConfig policy;
  policy.duplicate_mount_mode = RuleMode::kOff;
  const AuditReport r = Audit({Fixture("shallow-copy.json")}, policy);
  EXPECT_TRUE(Of(r, "duplicate-mount").empty());
  EXPECT_FALSE(Of(r, kWorkerDriftRule).empty());
}

TEST(Auditor, ItemsOfATypedListTakeTheirKindFromIt) {
  json list = Fixture("clean-cluster.json");
  json pods = {{"apiVersion", "v1"}, {"kind", "PodList"}, {"metadata", json::object()}, {"items", json::array()}};
  for (const json& item : list["items"]) {
    if (item["kind"] != "Pod") continue;
    json bare = item;
    bare.erase("kind");
    bare.erase("apiVersion");
    pods["items"].push_back(bare);
  }
  const AuditReport r = Audit({pods});
  EXPECT_EQ(r.pods, 3u);
  EXPECT_EQ(r.total_findings(), 0u);
}

TEST(Auditor, OtherKindsAreSkipped) {
  const AuditReport r = Audit({json{{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "x"}}}}});
  EXPECT_EQ(r.skipped_objects, 1u);
  EXPECT_EQ(r.total_findings(), 0u);
}

TEST(Auditor, BadDocumentsAreErrorsNamingTheirSource) {
  Auditor auditor({});
  Status s = auditor.AddDocument(ReadFixture("audit/bad/list-item-not-object.json"), "f.json document 1");
  EXPECT_EQ(s.message(), "f.json document 1 item 2: not an object");
  s = auditor.AddDocument(ReadFixture("audit/bad/deep.json"), "deep.json document 1");
  EXPECT_TRUE(Has(s.message(), "deep.json document 1: nested deeper than 128 levels")) << s.message();
  s = auditor.AddDocument("[]", "d");
  EXPECT_EQ(s.message(), "d: not an object (a JSON object or YAML mapping)");
  s = auditor.AddDocument(R"({"metadata": {}})", "d");
  EXPECT_EQ(s.message(), "d: no kind; not a Kubernetes object");
  s = auditor.AddDocument(R"({"kind": "Pod", "metadata": {}})", "d");
  EXPECT_EQ(s.message(), "d: Pod without apiVersion");
  s = auditor.AddDocument(R"({"kind": "PodList", "apiVersion": "v1", "items": {}})", "d");
  EXPECT_EQ(s.message(), "d: PodList whose items is not a list");
  s = auditor.AddDocument(R"({"kind": "List", "apiVersion": "v1", "items": [{"metadata": {}}]})", "d");
  EXPECT_EQ(s.message(), "d item 1: no kind or apiVersion; not a Kubernetes object");
  s = auditor.AddDocument(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": 5}}})", "d");
  EXPECT_TRUE(Has(s.message(), "d: Pod default/p: ")) << s.message();
  EXPECT_FALSE(Has(s.message(), "request.object")) << s.message();
  s = auditor.AddDocument(R"({"apiVersion": "v1", "kind": "Pod")", "d");
  EXPECT_EQ(s.message().rfind("d: not JSON: ", 0), 0u) << s.message();
  EXPECT_TRUE(auditor.AddDocument("null", "empty").ok());
  EXPECT_TRUE(auditor.AddDocument(" \n", "empty").ok());
  EXPECT_TRUE(auditor.AddDocument(R"({"kind": "PodList", "apiVersion": "v1", "items": null})", "d").ok());
  // Still usable after every error.
  EXPECT_TRUE(auditor.AddDocument(ReadFixture("audit/clean-cluster.json"), "clean").ok());
}

TEST(Auditor, KeyOrderAndBlanksDoNotMakeDrift) {
  // The same worker twice, once with every object's keys reversed and written with blanks.
  json dump = Fixture("clean-cluster.json");
  std::string spec_reversed;
  const std::function<void(const json&)> write = [&](const json& v) {
    if (v.is_object()) {
      spec_reversed += "{ ";
      std::vector<std::string> keys;
      for (auto it = v.begin(); it != v.end(); ++it) keys.insert(keys.begin(), it.key());
      for (std::size_t i = 0; i < keys.size(); ++i) {
        spec_reversed += (i ? " , " : "") + json(keys[i]).dump() + " : ";
        write(v[keys[i]]);
      }
      spec_reversed += " }";
    } else if (v.is_array()) {
      spec_reversed += "[ ";
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (i) spec_reversed += " , ";
        write(v[i]);
      }
      spec_reversed += " ]";
    } else {
      spec_reversed += v.dump();
    }
  };
  write(dump["items"][3]);
  Auditor auditor({});
  ASSERT_TRUE(auditor.AddDocument(dump.dump(), "a").ok());
  json again = dump["items"][3];
  again["metadata"]["name"] = "another";
  std::string text = again.dump();
  ASSERT_TRUE(auditor.AddDocument(text, "b").ok());
  ASSERT_TRUE(auditor.AddDocument(spec_reversed, "c").ok());
  const AuditReport r = auditor.Finish();
  EXPECT_TRUE(Of(r, kWorkerDriftRule).empty()) << r.findings.front().message;
  EXPECT_EQ(r.pods, 5u);
}

TEST(Auditor, FindingsBeyondTheBoundAreCounted) {
  json dump = Fixture("shallow-copy.json");
  json many = {{"apiVersion", "v1"}, {"kind", "List"}, {"items", json::array()}};
  // Each copy of the third worker has two findings: duplicate-mount and unmutated.
  for (std::size_t k = 0; k < kMaxAuditFindings / 2 + 10; ++k) {
    json pod = dump["items"][2];
    pod["metadata"]["name"] = "w" + std::to_string(k);
    pod["metadata"]["labels"]["ray.io/cluster"] = "c" + std::to_string(k);
    many["items"].push_back(pod);
  }
  const AuditReport r = Audit({many});
  EXPECT_EQ(r.findings.size(), kMaxAuditFindings);
  EXPECT_EQ(r.total_findings(), kMaxAuditFindings + 20);
  EXPECT_EQ(r.dropped_findings, 20u);
  EXPECT_EQ(r.findings_by_rule.at("unmutated"), kMaxAuditFindings / 2 + 10);
}

// A dump as `kubectl get rayjobs,rayclusters,rayservices -n ml -o json` prints it, with KubeRay v1.6.2's
// status, judged at 2026-12-05T10:00:00Z.
AuditReport AuditCostLeaks(CostLeakLimits limits = {}) {
  Auditor auditor(PolicyConfig{}, limits);
  const std::string dump = ReadFixture("audit/cost-leaks.json");
  const Status s = auditor.AddDocument(dump, "cost-leaks.json");
  EXPECT_TRUE(s.ok()) << s.message();
  return auditor.Finish(*ParseRfc3339("2026-12-05T10:00:00Z"));
}

TEST(Auditor, AFinishedJobsClusterStillRunningIsACostLeak) {
  const AuditReport r = AuditCostLeaks();
  EXPECT_EQ(r.ray_jobs, 6u);
  EXPECT_EQ(r.ray_clusters, 8u);
  EXPECT_EQ(r.ray_services, 3u);
  // Not eval-nightly (ended 5m ago, within its 60 s and the grace), not report-weekly (a shared cluster
  // by clusterSelector), not tune-sweep (its cluster is being deleted).
  const auto found = Of(r, "finished-job-cluster");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]->kind, "RayJob");
  EXPECT_EQ(found[0]->namespace_name, "ml");
  EXPECT_EQ(found[0]->name, "train-llm");
  EXPECT_EQ(found[0]->source, "cost-leaks.json item 1");
  EXPECT_TRUE(
      Has(found[0]->message,
          "RayJob train-llm ended Complete 2d 2h ago, and its RayCluster train-llm-raycluster-x7k2p still runs: "
          "3 Pod(s) requesting 20 CPU(s) and 2 GPU(s)."))
      << found[0]->message;
  EXPECT_EQ(r.findings_by_rule.at("finished-job-cluster"), 1u);
}

TEST(Auditor, ARayServicesLongPendingClusterIsAStuckUpgrade) {
  const AuditReport r = AuditCostLeaks();
  const auto found = Of(r, "stuck-upgrade");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0]->name, "serve-llm");
  EXPECT_EQ(found[0]->field_path, "status.pendingServiceStatus.rayClusterName");
  EXPECT_TRUE(
      Has(found[0]->message,
          "RayService serve-llm's new RayCluster serve-llm-raycluster-d3e4f has been pending for 1h 30m (3 Pod(s) "
          "requesting 20 CPU(s) and 4 GPU(s)), beside its active RayCluster serve-llm-raycluster-a1b2c (3 Pod(s) "
          "requesting 20 CPU(s) and 2 GPU(s))."))
      << found[0]->message;
}

// serve-chat's RayCluster suspended since 07:00 though the RayService asks for no suspension, and
// batch-resumed Suspended though its spec.suspend is not set; not serve-held nor batch-queued, whose
// specs ask for suspension.
TEST(Auditor, ASuspendedLoopIsFoundForARayServiceAndARayJob) {
  const AuditReport r = AuditCostLeaks();
  const auto found = Of(r, "suspended-loop");
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0]->kind, "RayJob");
  EXPECT_EQ(found[0]->name, "batch-resumed");
  EXPECT_EQ(found[0]->source, "cost-leaks.json item 16");
  EXPECT_TRUE(Has(found[0]->message,
                  "RayJob batch-resumed is Suspended though its spec.suspend is not true, for up to 2h 0m (the RayJob "
                  "records no time of its suspension: since its status.startTime); it has no RayCluster."))
      << found[0]->message;
  EXPECT_EQ(found[1]->kind, "RayService");
  EXPECT_EQ(found[1]->name, "serve-chat");
  EXPECT_EQ(found[1]->field_path, "status.activeServiceStatus.rayClusterName");
  EXPECT_EQ(found[1]->source, "cost-leaks.json item 12");
  EXPECT_TRUE(Has(found[1]->message,
                  "RayService serve-chat's active RayCluster serve-chat-raycluster-m5n6p has been suspended "
                  "(spec.suspend true) for 3h 0m, though the RayService's spec asks for no suspension"))
      << found[1]->message;
  EXPECT_TRUE(Has(found[1]->message, "Running, it would ask for 3 Pod(s) requesting 20 CPU(s) and 2 GPU(s)."));
  EXPECT_EQ(r.findings_by_rule.at("suspended-loop"), 2u);
}

TEST(Auditor, TheLimitsAndTheTimeDecide) {
  CostLeakLimits patient;
  patient.finished_job_grace = std::chrono::hours(72);
  patient.pending_cluster_limit = std::chrono::hours(2);
  patient.suspended_limit = std::chrono::hours(3);
  const AuditReport r = AuditCostLeaks(patient);
  EXPECT_TRUE(Of(r, "finished-job-cluster").empty());
  EXPECT_TRUE(Of(r, "suspended-loop").empty());
  EXPECT_TRUE(Of(r, "stuck-upgrade").empty());
  EXPECT_EQ(r.findings_by_rule.count("stuck-upgrade"), 0u);
  // Without a time, the rules over time are not run.
  Auditor auditor(PolicyConfig{});
  ASSERT_TRUE(auditor.AddDocument(ReadFixture("audit/cost-leaks.json"), "cost-leaks.json").ok());
  const AuditReport untimed = auditor.Finish();
  EXPECT_TRUE(Of(untimed, "finished-job-cluster").empty());
  EXPECT_TRUE(Of(untimed, "stuck-upgrade").empty());
  EXPECT_TRUE(Of(untimed, "suspended-loop").empty());
}

}  // namespace
}  // namespace ray_webhook
