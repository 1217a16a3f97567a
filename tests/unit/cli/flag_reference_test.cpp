#include "cli/flag_reference.h"

#include <gtest/gtest.h>

#include "cli/command_line.h"

namespace ray_webhook {
namespace {

Status Accept(ServeSettings&, std::string_view) { return Status::Ok(); }
std::string NoDefault(const ServeSettings&) { return ""; }
std::string Value(const ServeSettings&) { return "2s"; }
std::string Phrase(const ServeSettings&) { return "$VAR, else x"; }

const ServeFlag kFlags[] = {
    {"--one", "N", "first section", "help one", "the `a|b` choice", Accept, Value},
    {"--two", "FILE", "first section", "help two", "required", Accept, NoDefault},
    {"--three", "D", "second section", "help three", "from the environment", Accept, Phrase},
};

TEST(FlagReference, OneTablePerSectionInTableOrder) {
  const std::string md = FlagReferenceMarkdown(kFlags);
  const std::size_t first = md.find("\n## First section\n\n| flag | default | meaning |\n|---|---|---|\n");
  const std::size_t second = md.find("\n## Second section\n\n| flag | default | meaning |\n|---|---|---|\n");
  ASSERT_NE(first, std::string::npos) << md;
  ASSERT_NE(second, std::string::npos) << md;
  EXPECT_LT(first, second);
  EXPECT_LT(md.find("| `--one N` |"), md.find("| `--two FILE` |"));
  EXPECT_LT(md.find("| `--two FILE` |"), second);
  EXPECT_GT(md.find("| `--three D` |"), second);
}

TEST(FlagReference, RowsCarryTheDefaultAndEscapeBars) {
  const std::string md = FlagReferenceMarkdown(kFlags);
  EXPECT_NE(md.find("| `--one N` | `2s` | the `a\\|b` choice |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| `--two FILE` |  | required |\n"), std::string::npos) << md;
  EXPECT_NE(md.find("| `--three D` | $VAR, else x | from the environment |\n"), std::string::npos) << md;
}

TEST(FlagReference, SynopsisIsTheUsages) {
  const std::string md = FlagReferenceMarkdown(kFlags);
  EXPECT_NE(md.find("```\nray-webhook serve (--tls-cert FILE --tls-key FILE | --cert-dir DIR) [flags]\n"),
            std::string::npos)
      << md;
  EXPECT_NE(UsageText().find("  ray-webhook serve (--tls-cert FILE --tls-key FILE | --cert-dir DIR) [flags]\n"),
            std::string::npos);
  EXPECT_NE(md.find("ray-webhook --help | --version\n```\n"), std::string::npos) << md;
}

TEST(FlagReference, ListsTheFlagsAuditShares) {
  const std::string md = FlagReferenceMarkdown(kFlags);
  for (std::string_view name : AuditSharedFlags()) {
    EXPECT_NE(md.find("`" + std::string(name) + "`"), std::string::npos) << name;
  }
}

TEST(FlagReference, TheRealTableHasARowPerFlag) {
  const std::string md = FlagReferenceMarkdown();
  for (const ServeFlag& flag : ServeFlags()) {
    EXPECT_NE(md.find("| `" + std::string(flag.name) + " " + std::string(flag.argument) + "` |"), std::string::npos)
        << flag.name;
  }
}

}  // namespace
}  // namespace ray_webhook
