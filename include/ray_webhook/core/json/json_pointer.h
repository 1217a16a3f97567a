// JSON Pointer (RFC 6901) paths for patch operations.
//
// Contract: every segment is escaped ("~" -> "~0", "/" -> "~1") so that a
// label key such as "ray.io/cluster" addresses one member, never two levels.
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>

namespace ray_webhook {

std::string EscapeJsonPointerSegment(std::string_view segment);

// JsonPointer({"spec", "containers", "0", "env", "-"}) == "/spec/containers/0/env/-".
std::string JsonPointer(std::initializer_list<std::string_view> segments);

}  // namespace ray_webhook
