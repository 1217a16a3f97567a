#include "ray_webhook/core/model/admission_text.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

std::size_t Runes(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

TEST(AdmissionWarning, ShortTextIsKept) { EXPECT_EQ(AdmissionWarning("env \"A\" set twice"), "env \"A\" set twice"); }

// kube-apiserver silently drops warnings with control characters.
TEST(AdmissionWarning, ControlCharactersAreRemoved) {
  EXPECT_EQ(AdmissionWarning("a\nb\tc\x1b[0m\x7f"
                             "d"),
            "abc[0md");
  EXPECT_EQ(AdmissionWarning("x\xc2\x85y"), "xy");  // U+0085, a C1 control
}

TEST(AdmissionWarning, CutAt120RunesWithEllipsis) {
  const std::string w = AdmissionWarning(std::string(300, 'a'));
  EXPECT_EQ(Runes(w), kMaxWarningRunes);
  EXPECT_TRUE(w.ends_with("..."));
  EXPECT_EQ(AdmissionWarning(std::string(120, 'b')), std::string(120, 'b'));
}

TEST(AdmissionWarning, AWarningWithAFieldPathMayTakeWhatTheApiServerKeeps) {
  const std::string w = AdmissionWarning(std::string(300, 'a'), kMaxFieldWarningRunes);
  EXPECT_EQ(Runes(w), 256u);
  EXPECT_TRUE(w.ends_with("..."));
  EXPECT_EQ(AdmissionWarning(std::string(200, 'b'), kMaxFieldWarningRunes), std::string(200, 'b'));
}

TEST(AdmissionWarning, CutNeverSplitsAMultibyteCharacter) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "\xc3\xa9";  // é
  const std::string w = AdmissionWarning(text);
  EXPECT_EQ(Runes(w), kMaxWarningRunes);
  EXPECT_EQ(w.substr(0, 4), "\xc3\xa9\xc3\xa9");
  EXPECT_EQ(w.size(), 117 * 2 + 3u);
}

TEST(Quote, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(Quote("ray-worker"), "\"ray-worker\"");
  EXPECT_EQ(Quote("a\"b\\c\nd"), "\"a\\\"b\\\\c\\x0ad\"");
}

TEST(Quote, LongValuesAreCut) { EXPECT_EQ(Quote(std::string(10, 'x'), 4), "\"xxxx...\""); }

}  // namespace
}  // namespace ray_webhook
