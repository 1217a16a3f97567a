#include "cli/flag_table.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace ray_webhook {
namespace {

// Every entry can be found, shown in --help and in the reference, and parsed:
// a flag missing a part would print an empty help or reference line.
TEST(FlagTable, EveryEntryIsComplete) {
  std::set<std::string_view> names;
  for (const ServeFlag& flag : ServeFlags()) {
    EXPECT_TRUE(flag.name.starts_with("--")) << flag.name;
    EXPECT_TRUE(names.insert(flag.name).second) << flag.name << " is in the table twice";
    EXPECT_FALSE(flag.argument.empty()) << flag.name;
    EXPECT_FALSE(flag.section.empty()) << flag.name;
    EXPECT_FALSE(flag.help.empty()) << flag.name;
    EXPECT_FALSE(flag.reference.empty()) << flag.name;
    EXPECT_NE(flag.set, nullptr) << flag.name;
    EXPECT_NE(flag.shown, nullptr) << flag.name;
    EXPECT_EQ(FindServeFlag(flag.name), &flag);
  }
  EXPECT_EQ(FindServeFlag("--no-such-flag"), nullptr);
  EXPECT_EQ(FindServeFlag("port"), nullptr);
}

// A section is one run of entries, so --help and the reference list it once.
TEST(FlagTable, SectionsAreContiguous) {
  std::set<std::string_view> closed;
  std::string_view current;
  for (const ServeFlag& flag : ServeFlags()) {
    if (flag.section == current) continue;
    EXPECT_FALSE(closed.contains(flag.section)) << flag.name << " reopens section \"" << flag.section << "\"";
    if (!current.empty()) closed.insert(current);
    current = flag.section;
  }
}

TEST(FlagTable, AuditSharesOnlyFlagsOfTheTable) {
  ASSERT_FALSE(AuditSharedFlags().empty());
  for (std::string_view name : AuditSharedFlags()) EXPECT_NE(FindServeFlag(name), nullptr) << name;
}

TEST(FlagTable, SetParsesAndRefuses) {
  ServeSettings s;
  EXPECT_TRUE(FindServeFlag("--port")->set(s, "9443").ok());
  EXPECT_EQ(s.command.config.port, 9443);
  const Status bad = FindServeFlag("--port")->set(s, "0");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "--port must be a number from 1 to 65535, got \"0\"");
  EXPECT_EQ(s.command.config.port, 9443);
}

TEST(FlagTable, DefaultsArePrintedFromDefaultSettings) {
  const ServeSettings defaults;
  EXPECT_EQ(FindServeFlag("--port")->shown(defaults), "8443");
  EXPECT_EQ(FindServeFlag("--busy-poll")->shown(defaults), "100us");
  EXPECT_EQ(FindServeFlag("--audit-interval")->shown(defaults), "off");
  EXPECT_EQ(FindServeFlag("--tls-cert")->shown(defaults), "");
}

}  // namespace
}  // namespace ray_webhook
