#include "ray_webhook/audit/auditor.h"

#include <utility>

#include "ray_webhook/audit/cross_object_rules.h"
#include "ray_webhook/audit/object_facts.h"
#include "ray_webhook/core/decode/document_index.h"

namespace ray_webhook {

struct Auditor::Impl {
  Impl(PolicyConfig p, CostLeakLimits l) : policy(std::move(p)), reader(policy), across(l) {}

  // One object of a document: `object` its outline (DocumentIndex), kind and api_version its own or
  // the List's.
  Status AddObject(const DocumentIndex::Outline& object, const std::string& kind, const std::string& api_version,
                   const std::string& source) {
    if (Status read = reader.Read(object, kind, api_version, source, facts); !read.ok()) return read;
    CountObject(report, facts.kind);
    for (AuditFinding& f : facts.findings) AddFinding(report, std::move(f));
    across.Add(facts, reader.signature(), source);
    return Status::Ok();
  }

  PolicyConfig policy;
  ObjectFactsReader reader;
  CrossObjectRules across;
  DocumentIndex index;
  ObjectFacts facts;  // reused from object to object
  AuditReport report;
};

Auditor::Auditor(PolicyConfig policy, CostLeakLimits limits)
    : impl_(std::make_unique<Impl>(std::move(policy), limits)) {}
Auditor::~Auditor() = default;

Status Auditor::AddDocument(std::string_view json_text, std::string_view source_view, std::size_t readable_padding) {
  const std::string source(source_view);
  try {
    DocumentIndex& index = impl_->index;
    switch (index.Read(json_text, kMaxDocumentDepth, readable_padding)) {
      case DocumentIndex::Shape::kObject: break;
      case DocumentIndex::Shape::kNull: return Status::Ok();  // an empty YAML document
      case DocumentIndex::Shape::kNotObject:
        return Status::Error(source + ": not an object (a JSON object or YAML mapping)");
      case DocumentIndex::Shape::kTooDeep:
        return Status::Error(source + ": nested deeper than " + std::to_string(kMaxDocumentDepth) +
                             " levels, which no Kubernetes object is");
      case DocumentIndex::Shape::kInvalidJson: return Status::Error(source + ": not JSON: " + index.error());
    }
    const DocumentIndex::Outline& root = index.root();
    const std::string kind(root.kind);
    const std::string api_version(root.api_version);
    if (kind.empty()) return Status::Error(source + ": no kind; not a Kubernetes object");
    const DocumentIndex::Items items = index.items_shape();
    const bool list =
        kind == "List" || (kind.size() > 4 && kind.ends_with("List") && items != DocumentIndex::Items::kAbsent);
    if (!list) {
      if (api_version.empty()) return Status::Error(source + ": " + kind + " without apiVersion");
      return impl_->AddObject(root, kind, api_version, source);
    }
    if (items == DocumentIndex::Items::kAbsent || items == DocumentIndex::Items::kNull) return Status::Ok();
    if (items != DocumentIndex::Items::kList) return Status::Error(source + ": " + kind + " whose items is not a list");
    // A typed list's items carry no kind of their own when the API sends them.
    const std::string item_kind = kind == "List" ? "" : kind.substr(0, kind.size() - 4);
    std::size_t n = 0;
    for (const DocumentIndex::Outline& item : index.items()) {
      const std::string where = source + " item " + std::to_string(++n);
      if (!item.object) return Status::Error(where + ": not an object");
      std::string k(item.kind), v(item.api_version);
      if (k.empty()) k = item_kind;
      if (v.empty()) v = api_version;
      if (k.empty() || v.empty()) return Status::Error(where + ": no kind or apiVersion; not a Kubernetes object");
      if (Status added = impl_->AddObject(item, k, v, where); !added.ok()) return added;
    }
    return Status::Ok();
  } catch (const std::bad_alloc&) {
    return Status::Error(source + ": out of memory");
  }
}

AuditReport Auditor::Finish(std::optional<std::int64_t> now) {
  impl_->across.Finish(now, impl_->report);
  return std::move(impl_->report);
}

}  // namespace ray_webhook
