#include "ray_webhook/core/json/utf8_text.h"

#include <gtest/gtest.h>

#include <string>

namespace ray_webhook {
namespace {

TEST(Utf8Text, ValidTextIsUnchanged) {
  for (const std::string& text :
       {std::string(), std::string("plain"), std::string("f\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80")}) {
    EXPECT_EQ(Utf8Text(text), text);
  }
}

TEST(Utf8Text, EachInvalidByteBecomesAReplacementCharacter) {
  EXPECT_EQ(Utf8Text("a\xff!"), "a\xef\xbf\xbd!");
  EXPECT_EQ(Utf8Text("\xc3"), "\xef\xbf\xbd");                                  // cut short
  EXPECT_EQ(Utf8Text("\xc0\xaf"), "\xef\xbf\xbd\xef\xbf\xbd");                  // overlong
  EXPECT_EQ(Utf8Text("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
  EXPECT_EQ(Utf8Text("\xf4\x90\x80\x80").size(), 12u);                          // above U+10FFFF
}

}  // namespace
}  // namespace ray_webhook
