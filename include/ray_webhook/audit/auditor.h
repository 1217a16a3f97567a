// Auditor: applies every rule of ray-webhook to objects that already exist,
// read from a dump or listed from the Kubernetes API, and the rules that need
// a view of many objects.
//
// Contract: pure (no I/O, no clock); fed one document at a time, so that a
// caller reading a large cluster page by page holds one page, the findings
// and a small summary per RayCluster and worker group, never the whole list.
// A document is the JSON text of one object or of a List of them (kind
// "List" or "<Kind>List" with "items", as `kubectl get -o json` and the API
// answer); items without kind and apiVersion take them from the List (a
// PodList's items are Pods). The text is parsed once: the core's
// DocumentIndex finds the items' texts, and each object is decoded from its
// text by the core's ObjectDecoder, whose one parse also gives a worker Pod's
// worker spec signature; nlohmann/json reads only the two signatures of a
// drift being reported.
// Pods (v1) and ray.io RayCluster, RayJob and RayService (v1, v1alpha1) are
// audited; other kinds are counted and skipped. Each object is read once into
// its ObjectFacts (object_facts.h: its own findings, judged as at admission,
// live Pods only) and fed to CrossObjectRules (cross_object_rules.h:
// extra-head, worker-drift, and the rules over time, cost leaks and
// suspended loops, at the time Finish is given, with the limits the Auditor
// was made with; without a time these are not run).
// A document that is not a usable object (not valid JSON, not an object, no
// kind, nested deeper than kMaxDocumentDepth, a field of the wrong type where
// the decoder reads it) is an error naming its source; the Auditor stays
// usable. Empty text and null (an empty YAML document) are nothing to audit.
// Never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>

#include "ray_webhook/audit/audit_report.h"
#include "ray_webhook/audit/cost_leaks.h"
#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

// Far beyond any Kubernetes object (a RayService's deepest Pod field sits
// about 20 levels down); keeps every recursive walk of a document shallow.
inline constexpr std::size_t kMaxDocumentDepth = 128;

class Auditor {
 public:
  explicit Auditor(PolicyConfig policy, CostLeakLimits limits = {});
  ~Auditor();
  Auditor(const Auditor&) = delete;
  Auditor& operator=(const Auditor&) = delete;

  // source: where the document came from, for findings and errors ("dump.yaml document 3").
  // readable_padding: bytes after json_text that may be read (not written), so that the
  // parser reads the text in place rather than from a copy.
  Status AddDocument(std::string_view json_text, std::string_view source, std::size_t readable_padding = 0);

  // The report, with the cross-object rules applied. Call once. now: the
  // caller's clock (Unix seconds), which the rules over time judge by.
  AuditReport Finish(std::optional<std::int64_t> now = std::nullopt);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ray_webhook
