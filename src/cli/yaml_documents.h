// YamlDocuments: YAML text as the JSON documents the audit reads, parsed by
// yaml-cpp (Debian's libyaml-cpp-dev), never by hand.
//
// Contract: calls `each` with every document of the stream in order, numbered
// from 1, one at a time (the previous one is freed first), and stops at the
// first error, from the parser or from `each`. Built from yaml-cpp's event
// parser, so no yaml-cpp node tree is ever held; values are resolved as
// Kubernetes' YAML reader (sigs.k8s.io/yaml, YAML 1.1 rules of go-yaml v2)
// resolves plain scalars: null (~, null, empty), booleans (true/false,
// yes/no, on/off, y/n in their three casings), decimal, hexadecimal and octal
// integers, floats; quoted, block and !!str scalars stay strings, as do
// .inf and .nan (JSON has no such numbers). Mapping keys are strings (a key
// 1 is "1"); a key that is a mapping or sequence is an error. Bounds, each an
// error naming the document, line and column: nesting deeper than
// kMaxYamlDepth, and more than kMaxAliasNodes values copied through aliases
// (a "billion laughs" document). Never throws.
#pragma once

#include <cstddef>
#include <functional>
#include <istream>
#include <nlohmann/json.hpp>

#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

inline constexpr std::size_t kMaxYamlDepth = 128;
inline constexpr std::size_t kMaxAliasNodes = 100000;

using YamlDocumentSink = std::function<Status(nlohmann::json&& document, std::size_t number)>;

// Errors read "document N, line L, column C: what"; the caller adds the file.
Status ForEachYamlDocument(std::istream& in, const YamlDocumentSink& each);

}  // namespace ray_webhook
