#include "ray_webhook/server/usable_cpus.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <string>

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

std::string CgroupFixture(const char* name) { return std::string(RAY_WEBHOOK_FIXTURES) + "/cgroups/" + name; }

// cgroup v2 with a cgroup namespace (the default on v2): the container's
// cgroup is mounted at /sys/fs/cgroup.
TEST(CgroupCpuLimit, ReadsCpuMaxOfTheContainersCgroupV2) {
  EXPECT_EQ(CgroupCpuLimit(CgroupFixture("v2-container")), 2u);
}

// Kubernetes sets a Pod's limit on the Pod's cgroup too, above the
// container's; the lowest quota on the way up counts.
TEST(CgroupCpuLimit, TakesTheLowestQuotaUpToTheHierarchysRoot) {
  EXPECT_EQ(CgroupCpuLimit(CgroupFixture("v2-node")), 1u);
}

// cgroup v1 without a cgroup namespace: /proc/self/cgroup names the full path,
// and mountinfo's root field says which part of it is mounted.
TEST(CgroupCpuLimit, ReadsCfsQuotaOfTheContainersCgroupV1) {
  EXPECT_EQ(CgroupCpuLimit(CgroupFixture("v1-container")), 3u);
}

// A hybrid host: the cpu controller on v1 and an empty v2 hierarchy; only the
// controller named exactly "cpu" (not "cpuacct") carries the quota.
TEST(CgroupCpuLimit, ReadsTheV1CpuControllerOfAHybridHost) {
  EXPECT_EQ(CgroupCpuLimit(CgroupFixture("v1-hybrid-limited")), 2u);
  EXPECT_EQ(CgroupCpuLimit(CgroupFixture("v1-hybrid-unlimited")), 0u);  // cpu.cfs_quota_us -1
}

TEST(CgroupCpuLimit, NothingReadableIsNoLimit) { EXPECT_EQ(CgroupCpuLimit(CgroupFixture("absent")), 0u); }

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
