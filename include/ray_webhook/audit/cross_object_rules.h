// CrossObjectRules: the audit's rules that need a view of many objects, over
// the ObjectFacts of each.
//
// Contract: pure; fed the facts of every object once (Add), then judged once
// (Finish), which adds its findings to a report:
//  - extra-head: a RayCluster (namespace, label ray.io/cluster) with more than
//    one live head Pod (ray.io/node-type=head);
//  - worker-drift: live worker Pods of one group (ray.io/cluster, ray.io/group)
//    whose worker spec signatures differ (the spec without what differs per
//    Pod, ObjectDecoder::WorkerSpecSignature): each variant other than the
//    most common one is a finding naming its Pods and the fields that differ
//    (SpecDifferences). A group keeps one signature per variant, at most
//    kTrackedVariants of them;
//  - finished-job-cluster and stuck-upgrade (cost_leaks.h) and suspended-loop
//    (suspended_loops.h) at `now`, when a time is given.
// Memory holds a summary per RayCluster and worker group, bounded whatever
// the cluster holds. NextDeadline says when, after `now`, a rule over time
// could next change its mind without any object changing.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ray_webhook/audit/audit_report.h"
#include "ray_webhook/audit/cost_leaks.h"
#include "ray_webhook/audit/object_facts.h"

namespace ray_webhook {

class CrossObjectRules {
 public:
  explicit CrossObjectRules(CostLeakLimits limits);
  ~CrossObjectRules();
  CrossObjectRules(const CrossObjectRules&) = delete;
  CrossObjectRules& operator=(const CrossObjectRules&) = delete;

  // signature: a WorkerFact's worker spec signature (empty for other facts); source: where it was read.
  void Add(const ObjectFacts& facts, std::string_view signature, std::string_view source);
  // The same with a signature the caller keeps: shared, not copied (a view's 10,000 worker groups
  // would otherwise copy their signatures, some 40 MB, for every judgement).
  void Add(const ObjectFacts& facts, const std::shared_ptr<const std::string>& signature, std::string_view source);
  void Finish(std::optional<std::int64_t> now, AuditReport& report);
  std::optional<std::int64_t> NextDeadline(std::int64_t now) const;

 private:
  void AddObject(const ObjectFacts& facts, std::string_view signature, const std::shared_ptr<const std::string>& kept,
                 std::string_view source);

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ray_webhook
