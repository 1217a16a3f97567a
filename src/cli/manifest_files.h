// ManifestFiles: the documents of a file of Kubernetes objects, JSON or YAML.
//
// Contract: reads FILE, or stdin for "-", whole but never more than
// kMaxManifestBytes, and calls `each` with the JSON text of every document in
// order, with its source ("FILE document N", "stdin document N") for
// findings and errors, and how many bytes after the text may be read (so that
// the parser reads it in place). A file whose first character (after blanks
// and a UTF-8 byte order mark) is '{' is one JSON document, as `kubectl get -o
// json` writes it: handed on as it is, unparsed, so that the audit parses it
// once. Anything else is YAML (YamlDocuments), any number of documents: YAML
// becomes JSON by its parse, and each document is written out as JSON text
// once (strings that are not UTF-8 with U+FFFD in their place; null for an
// empty document). Stops at the first error, which names the file and the
// document; an error of `each` is returned as it is (it names its source
// itself). Never throws.
#pragma once

#include <cstddef>
#include <functional>
#include <istream>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

inline constexpr std::size_t kMaxManifestBytes = 128 * 1024 * 1024;

using ManifestSink =
    std::function<Status(std::string_view json_text, std::size_t readable_padding, const std::string& source)>;

// stdin_stream: what "-" reads.
Status ForEachManifestDocument(const std::string& path, std::istream& stdin_stream, const ManifestSink& each);

}  // namespace ray_webhook
