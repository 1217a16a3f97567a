// DocumentIndex: the outline of one JSON document of Kubernetes objects, an
// object or a List of them, read without decoding any object.
//
// Contract: Read() tokenises the text once, with the parser the object
// decoders use, and keeps as views, for the root and for each item of its
// "items": its exact text, whether it is an object, its kind, apiVersion and
// metadata.name, generateName and namespace, and how many bytes after it may
// be read, so that ObjectDecoder decodes it in place; and the root's
// metadata.continue (a paged list's next page) and what its "items" is.
// Nothing else is read: the objects are left to the object decoders, each
// from its own text. A field read here that is no string reads as absent. Before tokenising, a scan refuses a
// document nested deeper than max_depth (the root object or list is level 1).
// An empty text and the literal null are kNull (an empty YAML document
// becomes null). The views point into the text, or into the index's copy of
// it when the text has too little readable padding: valid while the text
// lives and until the next Read. One index serves one thread. Never throws.
// The JSON library stays behind this interface.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ray_webhook {

class DocumentIndex {
 public:
  enum class Shape { kNull, kObject, kNotObject, kTooDeep, kInvalidJson };
  enum class Items { kAbsent, kNull, kList, kOther };
  struct Outline {
    std::string_view text;  // without the blanks around it
    bool object = false;
    std::string_view kind;
    std::string_view api_version;
    std::string_view name;
    std::string_view generate_name;
    std::string_view namespace_name;
    std::size_t readable_padding = 0;  // for ObjectDecoder's Decode calls
  };

  DocumentIndex();
  ~DocumentIndex();
  DocumentIndex(const DocumentIndex&) = delete;
  DocumentIndex& operator=(const DocumentIndex&) = delete;

  // readable_padding: as for ObjectDecoder, bytes after json that may be read.
  Shape Read(std::string_view json, std::size_t max_depth, std::size_t readable_padding = 0);

  // For kInvalidJson, the parser's reason ("The JSON document has an improper structure: ...").
  const std::string& error() const;
  // For kObject: the root, its metadata.continue, and its items in order (none unless Items::kList).
  const Outline& root() const;
  std::string_view continue_token() const;
  Items items_shape() const;
  const std::vector<Outline>& items() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ray_webhook
