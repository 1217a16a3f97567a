#include "ray_webhook/audit/cluster_view.h"

#include <new>
#include <utility>

#include "ray_webhook/audit/auditor.h"
#include "ray_webhook/audit/cross_object_rules.h"

namespace ray_webhook {
namespace {

struct KindNames {
  std::string kind, api_version;
};

const KindNames& NamesOf(AuditedKind kind) {
  static const KindNames kPod{"Pod", "v1"}, kCluster{"RayCluster", "ray.io/v1"}, kJob{"RayJob", "ray.io/v1"},
      kService{"RayService", "ray.io/v1"}, kCronJob{"RayCronJob", "ray.io/v1"}, kNone{"", ""};
  switch (kind) {
    case AuditedKind::kPod: return kPod;
    case AuditedKind::kRayCluster: return kCluster;
    case AuditedKind::kRayJob: return kJob;
    case AuditedKind::kRayService: return kService;
    case AuditedKind::kRayCronJob: return kCronJob;
    case AuditedKind::kSkipped: break;
  }
  return kNone;
}

}  // namespace

ClusterView::ClusterView(PolicyConfig policy, CostLeakLimits limits) : policy_(std::move(policy)), limits_(limits) {}

ClusterView::Text ClusterView::Intern(std::string text) {
  if (auto it = texts_.find(text); it != texts_.end()) return it->second;
  auto kept = std::make_shared<const std::string>(std::move(text));
  texts_.emplace(std::string_view(*kept), kept);
  return kept;
}

void ClusterView::Release(Text& text) {
  // The table's own reference and this one: no object has it any more.
  if (text && text.use_count() == 2) texts_.erase(std::string_view(*text));
  text.reset();
}

void ClusterView::Forget(std::map<Key, Entry>::iterator it) {
  Entry gone = std::move(it->second);
  entries_.erase(it);
  Release(gone.signature);
  for (KeptFinding& f : gone.findings) {
    Release(f.rule);
    Release(f.field_path);
    Release(f.message);
  }
}

std::string_view ClusterView::SourceName(std::string_view source) {
  auto it = sources_.find(source);
  if (it == sources_.end()) {
    it = sources_.emplace(std::string(source), std::make_unique<const std::string>(source)).first;
  }
  return *it->second;
}

Status ClusterView::Upsert(AuditedKind kind, std::string_view object, std::string_view source) {
  const KindNames& names = NamesOf(kind);
  if (names.kind.empty()) return Status::Error("not a kind the audit watches");
  try {
    switch (index_.Read(object, kMaxDocumentDepth)) {
      case DocumentIndex::Shape::kObject: break;
      case DocumentIndex::Shape::kInvalidJson: return Status::Error(names.kind + ": not JSON: " + index_.error());
      case DocumentIndex::Shape::kTooDeep: return Status::Error(names.kind + ": nested too deep");
      case DocumentIndex::Shape::kNull:
      case DocumentIndex::Shape::kNotObject: return Status::Error(names.kind + ": not an object");
    }
    const DocumentIndex::Outline& root = index_.root();
    Key key{kind, root.namespace_name.empty() ? "default" : std::string(root.namespace_name),
            root.name.empty() ? std::string(root.generate_name) : std::string(root.name)};
    auto it = entries_.find(key);
    Entry entry;
    const std::string_view kept_source = SourceName(source);
    if (Status read = reader_.Read(root, names.kind, names.api_version, std::string(kept_source), entry.facts);
        !read.ok()) {
      if (it != entries_.end()) Forget(it);
      return read;
    }
    if (std::holds_alternative<WorkerFact>(entry.facts.across)) entry.signature = Intern(reader_.signature());
    for (AuditFinding& f : entry.facts.findings) {
      entry.findings.push_back(
          {Intern(std::move(f.rule)), Intern(std::move(f.field_path)), Intern(std::move(f.message))});
    }
    entry.facts.findings = {};
    entry.source = kept_source;
    entry.listed = generation_[static_cast<std::size_t>(kind)];
    if (it != entries_.end()) Forget(it);
    entries_.emplace(std::move(key), std::move(entry));
    return Status::Ok();
  } catch (const std::bad_alloc&) {
    return Status::Error(names.kind + ": out of memory");
  }
}

Status ClusterView::Remove(AuditedKind kind, std::string_view object) {
  if (index_.Read(object, kMaxDocumentDepth) != DocumentIndex::Shape::kObject) {
    return Status::Error(NamesOf(kind).kind + ": a deleted object that is not one");
  }
  const DocumentIndex::Outline& root = index_.root();
  auto it = entries_.find(Key{kind, root.namespace_name.empty() ? "default" : std::string(root.namespace_name),
                              root.name.empty() ? std::string(root.generate_name) : std::string(root.name)});
  if (it != entries_.end()) Forget(it);
  return Status::Ok();
}

void ClusterView::BeginResync(AuditedKind kind) { ++generation_[static_cast<std::size_t>(kind)]; }

void ClusterView::EndResync(AuditedKind kind) {
  const std::uint64_t current = generation_[static_cast<std::size_t>(kind)];
  for (auto it = entries_.lower_bound(Key{kind, "", ""}); it != entries_.end() && std::get<0>(it->first) == kind;) {
    auto next = std::next(it);
    if (it->second.listed != current) Forget(it);
    it = next;
  }
}

ClusterView::Judgement ClusterView::Judge(std::int64_t now) const {
  Judgement out;
  CrossObjectRules across(limits_);
  for (const auto& [key, entry] : entries_) {
    CountObject(out.report, entry.facts.kind);
    const std::string& kind = NamesOf(entry.facts.kind).kind;
    for (const KeptFinding& f : entry.findings) {
      AddFinding(out.report, {*f.rule, kind, entry.facts.namespace_name, entry.facts.name, *f.field_path, *f.message,
                              std::string(entry.source)});
    }
    across.Add(entry.facts, entry.signature, entry.source);
  }
  across.Finish(now, out.report);
  out.next_deadline = across.NextDeadline(now);
  return out;
}

}  // namespace ray_webhook
