#include "ray_webhook/core/spec/go_duration.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

TEST(GoDurationTest, ReadsWhatGoReads) {
  EXPECT_EQ(ParseGoDuration("0"), 0);
  EXPECT_EQ(ParseGoDuration("5m"), 300'000'000'000);
  EXPECT_EQ(ParseGoDuration("1h30m"), 5'400'000'000'000);
  EXPECT_EQ(ParseGoDuration("1.5s"), 1'500'000'000);
  EXPECT_EQ(ParseGoDuration(".5s"), 500'000'000);
  EXPECT_EQ(ParseGoDuration("-2ms"), -2'000'000);
  EXPECT_EQ(ParseGoDuration("+3us"), 3'000);
  EXPECT_EQ(ParseGoDuration("3\xC2\xB5s"), 3'000);
  EXPECT_EQ(ParseGoDuration("0s"), 0);
  EXPECT_EQ(ParseGoDuration("2562047h"), 2562047LL * 3'600'000'000'000);
}

TEST(GoDurationTest, RefusesWhatGoRefuses) {
  for (const char* bad : {"", "5", "-", "m", ".s", "5 m", "5d", "1h 30m", "3.", "9999999999h", "1e3s"}) {
    EXPECT_EQ(ParseGoDuration(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(ParseGoDuration("3.s"), 3'000'000'000);  // Go reads "3." as 3
}

TEST(GoDurationTest, AtoiLikeGo) {
  EXPECT_EQ(ParseGoInt("42"), 42);
  EXPECT_EQ(ParseGoInt("+7"), 7);
  EXPECT_EQ(ParseGoInt("-3"), -3);
  EXPECT_EQ(ParseGoInt("007"), 7);
  EXPECT_EQ(ParseGoInt("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(ParseGoInt("-9223372036854775808"), INT64_MIN);
  for (const char* bad : {"", "+", "1_000", "1.0", " 1", "9223372036854775808", "99999999999999999999"}) {
    EXPECT_EQ(ParseGoInt(bad), std::nullopt) << bad;
  }
}

}  // namespace
}  // namespace ray_webhook
