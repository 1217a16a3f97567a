#include "ray_webhook/core/json/base64.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "support/base64_decode.h"

namespace ray_webhook {
namespace {

// RFC 4648 section 10 test vectors.
TEST(Base64Encode, Rfc4648Vectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
}

TEST(Base64Encode, HighBytesUseTheStandardAlphabet) { EXPECT_EQ(Base64Encode(std::string("\xfb\xff\xbf", 3)), "+/+/"); }

// The tail is encoded over itself: every length, so that each of the three
// remainders and groups near both ends of the moved input are covered.
TEST(EncodeBase64Tail, MatchesBase64EncodeAndKeepsThePrefix) {
  for (std::size_t n = 0; n <= 200; ++n) {
    std::string bytes;
    for (std::size_t i = 0; i < n; ++i) bytes += static_cast<char>((i * 37 + n) & 0xFF);
    std::string text = "prefix:" + bytes;
    EncodeBase64Tail(text, 7);
    EXPECT_EQ(text, "prefix:" + Base64Encode(bytes)) << "length " << n;
  }
}

// An encoder of another shape (a bit accumulator) to check against: inputs of
// every length up to 300 and every byte value, so that the 24-byte vector
// steps (when the CPU has AVX2), the scalar groups after them and each padding
// case meet, in a separate buffer and in place.
std::string ReferenceBase64(const std::string& bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  unsigned buffer = 0;
  int bits = 0;
  for (unsigned char c : bytes) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += kAlphabet[(buffer >> bits) & 63];
    }
  }
  if (bits > 0) out += kAlphabet[(buffer << (6 - bits)) & 63];
  while (out.size() % 4 != 0) out += '=';
  return out;
}

TEST(Base64Encode, MatchesABitByBitEncoderAtEveryLength) {
  std::uint32_t state = 12345;  // Park-Miller, for the same bytes on every run
  for (std::size_t n = 0; n <= 300; ++n) {
    std::string bytes;
    for (std::size_t i = 0; i < n; ++i) {
      state = static_cast<std::uint32_t>(state * 48271ULL % 2147483647ULL);
      bytes += static_cast<char>(i < 256 && n == 256 ? i : state >> 7);  // n == 256: each byte value once
    }
    const std::string expected = ReferenceBase64(bytes);
    EXPECT_EQ(Base64Encode(bytes), expected) << "length " << n;
    std::string text = "answer:" + bytes;
    EncodeBase64Tail(text, 7);
    EXPECT_EQ(text, "answer:" + expected) << "length " << n << ", in place";
  }
}

TEST(Base64Decode, InvertsEncode) {
  for (const std::string& s :
       std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar", std::string("\xfb\xff\xbf\x00", 4)}) {
    EXPECT_EQ(Base64Decode(Base64Encode(s)), s);
  }
  EXPECT_EQ(Base64Decode("Zm9v!"), std::nullopt);
}

}  // namespace
}  // namespace ray_webhook
