#include "ray_webhook/core/json/json_writer.h"

#include <cstdint>
#include <cstring>

namespace ray_webhook {

namespace {

constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
constexpr std::uint64_t kHighs = 0x8080808080808080ULL;

// Nonzero when one of the 8 bytes in `word` is below 0x20, a quote or a
// backslash. Bytes of 0x80 and above (UTF-8) never count: they are masked
// out, as the bit tricks would otherwise read them as "below" or "equal".
inline std::uint64_t NeedsEscape(std::uint64_t word) {
  const std::uint64_t ascii = ~word & kHighs;
  const std::uint64_t below_space = (word - kOnes * 0x20) & ascii;
  const std::uint64_t q = word ^ (kOnes * '"');
  const std::uint64_t quote = (q - kOnes) & ~q & kHighs;
  const std::uint64_t b = word ^ (kOnes * '\\');
  const std::uint64_t backslash = (b - kOnes) & ~b & kHighs;
  return below_space | quote | backslash;
}

// The first index at or after `i` whose byte needs escaping, or text.size().
// Eight bytes at a time: most strings the core writes need no escape at all.
std::size_t NextEscape(std::string_view text, std::size_t i) {
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    if (NeedsEscape(word) != 0) break;
  }
  for (; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == '"' || c == '\\') return i;
  }
  return i;
}

}  // namespace

JsonWriter& JsonWriter::String(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out_ += '"';
  std::size_t start = 0;
  for (std::size_t i = NextEscape(text, 0); i < text.size(); i = NextEscape(text, start)) {
    const auto c = static_cast<unsigned char>(text[i]);
    out_.append(text.substr(start, i - start));
    switch (c) {
      case '"': out_ += "\\\""; break;
      case '\\': out_ += "\\\\"; break;
      case '\n': out_ += "\\n"; break;
      case '\r': out_ += "\\r"; break;
      case '\t': out_ += "\\t"; break;
      default:
        out_ += "\\u00";
        out_ += kHex[c >> 4];
        out_ += kHex[c & 15];
    }
    start = i + 1;
  }
  out_.append(text.substr(start));
  out_ += '"';
  return *this;
}

}  // namespace ray_webhook
