#include "ray_webhook/core/model/admission_text.h"

#include <cstdio>

namespace ray_webhook {
namespace {

bool IsContinuationByte(unsigned char c) { return (c & 0xC0) == 0x80; }

// C0 controls, DEL, and the C1 controls U+0080..U+009F (encoded as C2 80..C2 9F).
std::size_t ControlLength(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if (c < 0x20 || c == 0x7F) return 1;
  if (c == 0xC2 && i + 1 < s.size()) {
    const auto d = static_cast<unsigned char>(s[i + 1]);
    if (d >= 0x80 && d <= 0x9F) return 2;
  }
  return 0;
}

}  // namespace

std::string AdmissionWarning(std::string_view text, std::size_t max_runes) {
  std::string out;
  out.reserve(text.size() < max_runes ? text.size() : max_runes);
  std::size_t runes = 0;
  std::size_t i = 0;
  std::size_t cut_at = std::string::npos;  // byte length after max_runes - 3 runes
  while (i < text.size()) {
    if (std::size_t n = ControlLength(text, i)) {
      i += n;
      continue;
    }
    std::size_t len = 1;
    while (i + len < text.size() && IsContinuationByte(static_cast<unsigned char>(text[i + len]))) ++len;
    if (runes == max_runes - 3) cut_at = out.size();
    if (runes == max_runes) {
      out.resize(cut_at);
      out += "...";
      return out;
    }
    out.append(text.substr(i, len));
    ++runes;
    i += len;
  }
  return out;
}

std::string Quote(std::string_view value, std::size_t max_bytes) {
  std::string out = "\"";
  const bool cut = value.size() > max_bytes;
  if (cut) {
    std::size_t end = max_bytes;
    while (end > 0 && IsContinuationByte(static_cast<unsigned char>(value[end]))) --end;
    value = value.substr(0, end);
  }
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (std::size_t n = ControlLength(value, i)) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(value[i + n - 1]));
      out += buf;
      i += n - 1;
    } else {
      out += c;
    }
  }
  out += cut ? "...\"" : "\"";
  return out;
}

}  // namespace ray_webhook
