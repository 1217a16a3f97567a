#include "ray_webhook/core/json/json_pointer.h"

namespace ray_webhook {
namespace {

void AppendEscaped(std::string& out, std::string_view segment) {
  for (char c : segment) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
}

}  // namespace

std::string EscapeJsonPointerSegment(std::string_view segment) {
  std::string out;
  out.reserve(segment.size());
  AppendEscaped(out, segment);
  return out;
}

std::string JsonPointer(std::initializer_list<std::string_view> segments) {
  std::size_t size = 0;
  for (std::string_view s : segments) size += 1 + s.size();
  std::string out;
  out.reserve(size);  // one allocation unless a segment needs escaping
  for (std::string_view s : segments) {
    out += '/';
    AppendEscaped(out, s);
  }
  return out;
}

}  // namespace ray_webhook
