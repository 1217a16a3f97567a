#include "ray_webhook/core/pod/duplicate_env_rule.h"

#include <gtest/gtest.h>

#include "ray_webhook/core/model/admission_text.h"
#include "support/pod_builder.h"

namespace ray_webhook {
namespace {

using testing::PodBuilder;

TEST(DuplicateEnvRule, WarnsOncePerDuplicatedName) {
  PodBuilder b;
  b.Container("ray-worker").Env("RAY_PORT", "1").Env("A", "x").Env("RAY_PORT", "2").Env("RAY_PORT", "3");
  const std::vector<std::string> warnings = DuplicateEnvWarnings(b.pod());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0], "container \"ray-worker\" sets env \"RAY_PORT\" 3 times; the last one wins");
}

TEST(DuplicateEnvRule, UniqueNamesAndOtherContainersDoNotWarn) {
  PodBuilder b;
  b.Container("a").Env("X", "1").Container("b").Env("X", "1").InitContainer("c").EnvFrom("X").Env("Y", "");
  const std::vector<std::string> warnings = DuplicateEnvWarnings(b.pod());
  EXPECT_TRUE(warnings.empty());
}

TEST(DuplicateEnvRule, WarningsStayWithinApiServerLimits) {
  PodBuilder b;
  b.Container(std::string(200, 'c'));
  for (int i = 0; i < 20; ++i)
    b.Env("NAME_" + std::to_string(i) + "\n" + std::string(100, 'n'), "v")
        .Env("NAME_" + std::to_string(i) + "\n" + std::string(100, 'n'), "v");
  const std::vector<std::string> warnings = DuplicateEnvWarnings(b.pod());
  EXPECT_EQ(warnings.size(), 8u);
  for (const auto& w : warnings) {
    EXPECT_LE(w.size(), kMaxWarningRunes);  // ASCII here, so bytes == runes
    EXPECT_EQ(w.find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace ray_webhook
