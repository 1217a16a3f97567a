#include "ray_webhook/json_pointer.h"

namespace ray_webhook {

std::string EscapeJsonPointerSegment(std::string_view segment) {
  std::string out;
  out.reserve(segment.size());
  for (char c : segment) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string JsonPointer(std::initializer_list<std::string_view> segments) {
  std::string out;
  for (std::string_view s : segments) {
    out += '/';
    out += EscapeJsonPointerSegment(s);
  }
  return out;
}

}  // namespace ray_webhook
