#include "core/spec/cron_schedule.h"

#include <gtest/gtest.h>

namespace ray_webhook {
namespace {

TEST(CronScheduleTest, AcceptsWhatParseStandardAccepts) {
  for (const char* ok : {"* * * * *",
                         "*/5 * * * *",
                         "0 0 * * 0",
                         "0 9-17 * * mon-fri",
                         "30 2 1,15 * *",
                         "0 0 1 JAN *",
                         "0 0 ? * ?",
                         "5/15 * * * *",
                         "0 0 * * 6",
                         "0,,30 * * * *",
                         ", * * * *",
                         "  0  12\t* * *  ",
                         "*-3 * * * *",
                         "+5 * * * *",
                         "059 * * * *",
                         "@hourly",
                         "@daily",
                         "@midnight",
                         "@weekly",
                         "@monthly",
                         "@yearly",
                         "@annually",
                         "@every 90s",
                         "@every 1h30m",
                         "@every -5m",
                         "@every 0",
                         "TZ=UTC 0 0 * * *",
                         "CRON_TZ=America/New_York 0 0 * * *",
                         "TZ=Europe/Berlin   @daily  ",
                         "TZ= * * * * *"}) {
    EXPECT_EQ(StandardCronScheduleError(ok), std::nullopt) << ok;
  }
}

TEST(CronScheduleTest, RefusesWhatParseStandardRefuses) {
  for (const char* bad : {"",
                          " ",
                          "* * * *",
                          "* * * * * *",
                          "60 * * * *",
                          "* 24 * * *",
                          "* * 0 * *",
                          "* * 32 * *",
                          "* * * 0 *",
                          "* * * 13 *",
                          "* * * * 7",
                          "5-2 * * * *",
                          "*/0 * * * *",
                          "1-2-3 * * * *",
                          "1/2/3 * * * *",
                          "a * * * *",
                          "-1 * * * *",
                          "* * * * mon-sun",
                          "* * L * *",
                          "* * * * 1#2",
                          "* * 15W * *",
                          "@reboot",
                          "@Daily",
                          " @daily",
                          "@daily ",
                          "@every",
                          "@every 5",
                          "@every  5m",
                          "TZ=UTC",
                          "TZ=../etc 0 0 * * *",
                          "TZ=New York 0 0 * * *",
                          "*/x * * * *",
                          "1/-2 * * * *"}) {
    EXPECT_NE(StandardCronScheduleError(bad), std::nullopt) << bad;
  }
}

TEST(CronScheduleTest, SplitsOnUnicodeSpaceAsGoDoes) {
  EXPECT_EQ(StandardCronScheduleError("0\xC2\xA0"
                                      "0 * * *"),
            std::nullopt);
  EXPECT_EQ(StandardCronScheduleError("0\xE3\x80\x80"
                                      "0 * * *"),
            std::nullopt);
}

TEST(CronScheduleTest, TimeZoneNames) {
  EXPECT_FALSE(TimeZoneNameCannotExist("UTC"));
  EXPECT_FALSE(TimeZoneNameCannotExist("America/Argentina/Buenos_Aires"));
  EXPECT_FALSE(TimeZoneNameCannotExist("Etc/GMT+5"));
  EXPECT_FALSE(TimeZoneNameCannotExist("America/Port-au-Prince"));
  EXPECT_TRUE(TimeZoneNameCannotExist("Europe/../UTC"));
  EXPECT_TRUE(TimeZoneNameCannotExist("/etc/localtime"));
  EXPECT_TRUE(TimeZoneNameCannotExist("New York"));
  EXPECT_TRUE(TimeZoneNameCannotExist("UTC+01:00"));
}

}  // namespace
}  // namespace ray_webhook
