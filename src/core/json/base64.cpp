#include "ray_webhook/core/json/base64.h"

#include <cstring>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define RAY_WEBHOOK_BASE64_AVX2 1
#endif

namespace ray_webhook {

namespace {

constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::size_t EncodedSize(std::size_t n) { return (n + 2) / 3 * 4; }

#ifdef RAY_WEBHOOK_BASE64_AVX2
// 24 bytes into 32 characters per step, with the method of W. Mula and D.
// Lemire, "Faster Base64 Encoding and Decoding Using AVX2 Instructions" (ACM
// TWEB 12(3), 2018): each 128-bit half takes 12 bytes; a byte shuffle puts
// every group of three in a 32-bit word as [b1 b0 b2 b1], two multiplies move
// its four 6-bit fields into four bytes, and a 16-entry table adds to each
// field the offset of its range of the alphabet. Reads 28 bytes per step, so
// it stops with fewer than 28 left and returns how many bytes it encoded.
// Each step reads all its input before it writes (see EncodeGroups).
__attribute__((target("avx2"))) std::size_t EncodeBlocksAvx2(const unsigned char* src, std::size_t n, char* dst) {
  const __m256i shuffle = _mm256_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10,  //
                                           1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
  // Fields 0-25 map to 'A'.., 26-51 to 'a'.., 52-61 to '0'.., 62 to '+', 63 to '/':
  // offsets indexed by (field - 51, saturated at 0), with 13 for fields below 26.
  const __m256i offsets = _mm256_setr_epi8('a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                                           '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0,
                                           'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                                           '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0);
  std::size_t i = 0;
  for (; i + 28 <= n; i += 24, dst += 32) {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i + 12));
    const __m256i in = _mm256_shuffle_epi8(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1), shuffle);
    // Fields 0 and 2 (masked, then shifted down by a high multiply) and 1 and 3 (shifted up by a low one).
    const __m256i f02 =
        _mm256_mulhi_epu16(_mm256_and_si256(in, _mm256_set1_epi32(0x0fc0fc00)), _mm256_set1_epi32(0x04000040));
    const __m256i f13 =
        _mm256_mullo_epi16(_mm256_and_si256(in, _mm256_set1_epi32(0x003f03f0)), _mm256_set1_epi32(0x01000010));
    const __m256i fields = _mm256_or_si256(f02, f13);
    __m256i range = _mm256_subs_epu8(fields, _mm256_set1_epi8(51));
    const __m256i below_26 = _mm256_cmpgt_epi8(_mm256_set1_epi8(26), fields);
    range = _mm256_or_si256(range, _mm256_and_si256(below_26, _mm256_set1_epi8(13)));
    const __m256i text = _mm256_add_epi8(fields, _mm256_shuffle_epi8(offsets, range));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst), text);
  }
  return i;
}

bool HasAvx2() {
  static const bool has = __builtin_cpu_supports("avx2");
  return has;
}
#endif

// Encodes n bytes at src into EncodedSize(n) characters at dst, each group of
// three bytes read before its four characters are written: dst may start
// before src and overlap it as long as it never runs ahead of the input still
// to be read (EncodeBase64Tail's layout). The AVX2 steps keep to this too: in
// that layout input byte j sits at output offset (m - n) + j, m = EncodedSize(n),
// and a step that starts at input byte i writes up to output offset 4i/3 + 32,
// short of byte i + 24, where the next step reads, since
// m - n >= ceil(n/3) > i/3 + 8 whenever i + 28 <= n.
void EncodeGroups(const unsigned char* src, std::size_t n, char* dst) {
  const char* alphabet = kAlphabet.data();
  std::size_t i = 0;
#ifdef RAY_WEBHOOK_BASE64_AVX2
  if (n >= 28 && HasAvx2()) {
    i = EncodeBlocksAvx2(src, n, dst);
    dst += i / 3 * 4;
  }
#endif
  for (; i + 3 <= n; i += 3, dst += 4) {
    const unsigned v = (unsigned{src[i]} << 16) | (unsigned{src[i + 1]} << 8) | src[i + 2];
    const char group[4] = {alphabet[v >> 18], alphabet[(v >> 12) & 63], alphabet[(v >> 6) & 63], alphabet[v & 63]};
    std::memcpy(dst, group, 4);  // one store: char stores one by one would reload the pointers
  }
  const std::size_t rest = n - i;
  if (rest > 0) {
    const unsigned v = (unsigned{src[i]} << 16) | (rest == 2 ? unsigned{src[i + 1]} << 8 : 0);
    const char group[4] = {alphabet[v >> 18], alphabet[(v >> 12) & 63], rest == 2 ? alphabet[(v >> 6) & 63] : '=', '='};
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
