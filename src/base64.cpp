#include "ray_webhook/base64.h"

#include <cstring>

namespace ray_webhook {

namespace {
constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
}  // namespace

std::optional<std::string> Base64Decode(std::string_view text) {
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    const auto pos = kAlphabet.find(c);
    if (pos == std::string_view::npos) return std::nullopt;
    buffer = (buffer << 6) | static_cast<unsigned>(pos);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xFF);
    }
  }
  return out;
}

namespace {

constexpr std::size_t EncodedSize(std::size_t n) { return (n + 2) / 3 * 4; }

// Encodes n bytes at src into EncodedSize(n) characters at dst, one group of
// three bytes at a time, each group read before its four characters are
// written: dst may start before src and overlap it as long as it never runs
// ahead of the input still to be read (EncodeBase64Tail's layout).
void EncodeGroups(const unsigned char* src, std::size_t n, char* dst) {
  const char* alphabet = kAlphabet.data();
  std::size_t i = 0;
  for (; i + 3 <= n; i += 3, dst += 4) {
    const unsigned v = (unsigned{src[i]} << 16) | (unsigned{src[i + 1]} << 8) | src[i + 2];
    const char group[4] = {alphabet[v >> 18], alphabet[(v >> 12) & 63], alphabet[(v >> 6) & 63], alphabet[v & 63]};
    std::memcpy(dst, group, 4);  // one store: char stores one by one would reload the pointers
  }
  const std::size_t rest = n - i;
  if (rest > 0) {
    const unsigned v = (unsigned{src[i]} << 16) | (rest == 2 ? unsigned{src[i + 1]} << 8 : 0);
    const char group[4] = {alphabet[v >> 18], alphabet[(v >> 12) & 63], rest == 2 ? alphabet[(v >> 6) & 63] : '=',
                           '='};
    std::memcpy(dst, group, 4);
  }
}

}  // namespace

std::string Base64Encode(std::string_view bytes) {
  std::string out(EncodedSize(bytes.size()), '\0');
  EncodeGroups(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), out.data());
  return out;
}

void EncodeBase64Tail(std::string& text, std::size_t from) {
  const std::size_t n = text.size() - from;
  const std::size_t m = EncodedSize(n);
  text.resize(from + m);
  char* base = text.data() + from;
  // The input moves to the end of the encoded span. Group g is read from
  // base + (m - n) + 3g and written to base + 4g; the write ends before the
  // next group's input starts, since 4g + 4 <= (m - n) + 3g + 3 holds for every
  // group (m - n >= number of groups).
  std::memmove(base + (m - n), base, n);
  EncodeGroups(reinterpret_cast<const unsigned char*>(base + (m - n)), n, base);
}

}  // namespace ray_webhook
