#include "ray_webhook/base64.h"

#include <gtest/gtest.h>

#include <vector>

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

TEST(Base64Encode, HighBytesUseTheStandardAlphabet) {
  EXPECT_EQ(Base64Encode(std::string("\xfb\xff\xbf", 3)), "+/+/");
}

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

TEST(Base64Decode, InvertsEncode) {
  for (const std::string& s : std::vector<std::string>{"", "f", "fo", "foo", "foob", "fooba", "foobar", std::string("\xfb\xff\xbf\x00", 4)}) {
    EXPECT_EQ(Base64Decode(Base64Encode(s)), s);
  }
  EXPECT_EQ(Base64Decode("Zm9v!"), std::nullopt);
}

}  // namespace
}  // namespace ray_webhook
