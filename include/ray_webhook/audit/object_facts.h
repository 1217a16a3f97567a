// ObjectFacts: what the audit keeps of one object: the findings of its own
// rules and the few fields the rules across objects read, never the object.
//
// Contract: ObjectFactsReader::Read decodes one object once (the core's
// ObjectDecoder, reading each field as admission does) and judges it with
// ObjectFindings over the request of its CREATE. Only live Pods are judged
// (not terminating, not Succeeded or Failed: IsLiveHead, the second-head
// rule's definition); the others are counted and carry nothing. A live Ray
// head Pod is a HeadFact; a live worker a WorkerFact, its worker spec
// signature left in the reader (signature()) until the next Read; a
// RayCluster, RayJob or RayService the facts the rules over time read. Kinds
// other than Pod v1 and ray.io's are kSkipped. A decode error names the
// source and the object; the reader stays usable. Not thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ray_webhook/audit/audit_report.h"
#include "ray_webhook/audit/cost_leaks.h"
#include "ray_webhook/audit/suspended_loops.h"
#include "ray_webhook/core/decode/document_index.h"
#include "ray_webhook/core/decode/object_decoder.h"
#include "ray_webhook/core/model/head_pods.h"
#include "ray_webhook/core/model/policy_config.h"
#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

enum class AuditedKind { kPod, kRayCluster, kRayJob, kRayService, kRayCronJob, kSkipped };

// A live head Pod of RayCluster `cluster`.
struct HeadFact {
  std::string cluster;
  HeadPod pod;
};

// A live worker Pod of group `group` of RayCluster `cluster`.
struct WorkerFact {
  std::string cluster, group, name;
  std::size_t signature_hash = 0;  // of ObjectDecoder::WorkerSpecSignature
};

struct ObjectFacts {
  AuditedKind kind = AuditedKind::kSkipped;
  std::string namespace_name, name;  // "default" when the object has no namespace
  std::vector<AuditFinding> findings;
  std::variant<std::monostate, HeadFact, WorkerFact, RayClusterFacts, RayJobFacts, RayServiceFacts> across;
  // A ray.io object's part in the suspended-loop rule, when it has one (a suspended RayCluster or
  // RayJob, a RayService naming a cluster).
  std::unique_ptr<const SuspendedLoopFacts> suspended;
};

// The report's count of what was read.
void CountObject(AuditReport& report, AuditedKind kind);

class ObjectFactsReader {
 public:
  explicit ObjectFactsReader(const PolicyConfig& policy) : policy_(policy) {}

  // object: an outline of DocumentIndex; kind and api_version its own or its List's.
  Status Read(const DocumentIndex::Outline& object, const std::string& kind, const std::string& api_version,
              const std::string& source, ObjectFacts& facts);
  // The last worker's signature (WorkerFact), valid until the next Read.
  const std::string& signature() const { return signature_; }

 private:
  const PolicyConfig& policy_;
  ObjectDecoder decoder_;
  std::string signature_;
};

}  // namespace ray_webhook
