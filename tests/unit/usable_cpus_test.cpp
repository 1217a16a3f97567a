#include "ray_webhook/usable_cpus.h"

#include <gtest/gtest.h>
#include <sched.h>

namespace ray_webhook {
namespace {

// cgroup v2 cpu.max, as a Pod's resources.limits.cpu sets it (quota and period in µs).
TEST(CpusOfQuota, AQuotaIsRoundedUpToWholeCpus) {
  EXPECT_EQ(CpusOfQuota("100000 100000\n"), 1u);
  EXPECT_EQ(CpusOfQuota("50000 100000\n"), 1u);   // limits.cpu: 500m
  EXPECT_EQ(CpusOfQuota("150000 100000\n"), 2u);  // 1500m
  EXPECT_EQ(CpusOfQuota("400000 100000"), 4u);
}

TEST(CpusOfQuota, NoLimitOrNoLineIsZero) {
  EXPECT_EQ(CpusOfQuota("max 100000\n"), 0u);
  EXPECT_EQ(CpusOfQuota(""), 0u);
  EXPECT_EQ(CpusOfQuota("100000"), 0u);
  EXPECT_EQ(CpusOfQuota("0 100000"), 0u);
  EXPECT_EQ(CpusOfQuota("100000 0"), 0u);
  EXPECT_EQ(CpusOfQuota("12x 100000"), 0u);
}

TEST(UsableCpus, NeverMoreThanTheAffinityAllowsAndAtLeastOne) {
  cpu_set_t set;
  CPU_ZERO(&set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(set), &set), 0);
  const std::size_t cpus = UsableCpus();
  EXPECT_GE(cpus, 1u);
  EXPECT_LE(cpus, static_cast<std::size_t>(CPU_COUNT(&set)));
}

}  // namespace
}  // namespace ray_webhook
