// ManifestFiles: the documents of a file of Kubernetes objects, JSON or YAML.
//
// Contract: reads FILE, or stdin for "-", whole but never more than
// kMaxManifestBytes (the document is then held whole, parsed: a 55 MiB dump of
// 4,000 Pods took 190 MB), and calls `each` with every document in order, with
// its source ("FILE document N", "stdin document N") for findings and
// errors. A file whose first character (after blanks and a UTF-8 byte order
// mark) is '{' is one JSON document, as `kubectl get -o json` writes it;
// anything else is YAML (YamlDocuments), any number of documents. Stops at the
// first error, which names the file and the document; an error of `each` is
// returned as it is (it names its source itself). Never throws.
#pragma once

#include <cstddef>
#include <functional>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>

#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

inline constexpr std::size_t kMaxManifestBytes = 128 * 1024 * 1024;

using ManifestSink = std::function<Status(const nlohmann::json& document, const std::string& source)>;

// stdin_stream: what "-" reads.
Status ForEachManifestDocument(const std::string& path, std::istream& stdin_stream, const ManifestSink& each);

}  // namespace ray_webhook
