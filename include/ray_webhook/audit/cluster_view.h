// ClusterView: the audit's view of a live cluster, kept up to date by the
// lists and watches of its Ray Pods and ray.io objects rather than read again.
//
// Contract: pure (no I/O, no clock) and not thread-safe. Each object is
// decoded once per change (Upsert: what a list or a watch hands on, its kind
// the collection's) and kept as ObjectFacts: its own findings and what the
// rules across objects read, never the object; worker spec signatures and
// the texts of findings (the same for every Pod of a group) are kept once
// per distinct text. Remove forgets an object (a DELETED event).
// BeginResync and EndResync bracket a complete list of one kind: what the
// list did not hand on is gone, even an object deleted while no watch ran.
// Judge(now) is the report of every object kept, as Auditor::Finish would
// give for the same objects (CrossObjectRules), and the time at which a rule
// over time would next change its mind with nothing changed. An object that
// cannot be decoded is an error naming it; it is forgotten, so a stale state
// is not judged.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "ray_webhook/audit/audit_report.h"
#include "ray_webhook/audit/cost_leaks.h"
#include "ray_webhook/audit/object_facts.h"
#include "ray_webhook/core/decode/document_index.h"
#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

class ClusterView {
 public:
  ClusterView(PolicyConfig policy, CostLeakLimits limits);
  ClusterView(const ClusterView&) = delete;
  ClusterView& operator=(const ClusterView&) = delete;

  // kind: the collection's (kPod .. kRayCronJob; the API leaves a list's items without one).
  // source: where it came from, for findings ("API pods").
  Status Upsert(AuditedKind kind, std::string_view object, std::string_view source);
  Status Remove(AuditedKind kind, std::string_view object);
  void BeginResync(AuditedKind kind);
  void EndResync(AuditedKind kind);

  struct Judgement {
    AuditReport report;
    std::optional<std::int64_t> next_deadline;  // Unix seconds
  };
  Judgement Judge(std::int64_t now) const;

  std::size_t objects() const { return entries_.size(); }
  std::size_t distinct_texts() const { return texts_.size(); }

 private:
  using Text = std::shared_ptr<const std::string>;
  // A finding of the object's own, its kind, namespace, name and source the entry's.
  struct KeptFinding {
    Text rule, field_path, message;
  };
  struct Entry {
    ObjectFacts facts;  // findings moved to `findings`
    std::vector<KeptFinding> findings;
    Text signature;            // a worker's
    std::string_view source;   // one of sources_
    std::uint64_t listed = 0;  // the generation of its kind's list that last saw it
  };
  using Key = std::tuple<AuditedKind, std::string, std::string>;  // kind, namespace, name

  Text Intern(std::string text);
  void Release(Text& text);
  void Forget(std::map<Key, Entry>::iterator it);
  std::string_view SourceName(std::string_view source);

  const PolicyConfig policy_;
  const CostLeakLimits limits_;
  ObjectFactsReader reader_{policy_};
  DocumentIndex index_;
  std::map<Key, Entry> entries_;
  std::unordered_map<std::string_view, Text> texts_;  // keyed by their own text
  std::map<std::string, std::unique_ptr<const std::string>, std::less<>> sources_;
  std::array<std::uint64_t, 6> generation_{};
};

}  // namespace ray_webhook
