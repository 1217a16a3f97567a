// UsableCpus: how many CPUs the server can keep busy, for the number of
// ConnectionLoop workers that take requests at once.
//
// Contract: the CPUs of the process's affinity (taskset, a cpuset cgroup),
// lowered to the CPU quota of its cgroups rounded up; at least one. A Pod's CPU
// limit sets that quota: cpu.max on cgroup v2, cpu.cfs_quota_us and
// cpu.cfs_period_us on cgroup v1, and both are read (a hybrid host has both).
// The cgroup file systems are found in /proc/self/mountinfo, so a container's
// own view (its cgroup mounted at /sys/fs/cgroup, with or without a cgroup
// namespace) is read right. A file it cannot read means no limit from it.
// Never throws.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ray_webhook {

std::size_t UsableCpus();

// The whole CPUs that the cgroups of the process allow, 0 when none sets a
// quota. Reads proc/self/cgroup, proc/self/mountinfo and the cgroup files under
// `root` ("/" on a running system; tests give a directory laid out like one).
std::size_t CgroupCpuLimit(const std::string& root);

// The CPUs a cpu.max line allows ("QUOTA PERIOD" in microseconds, or "max
// PERIOD"), rounded up; 0 when it sets no limit or does not parse.
std::size_t CpusOfQuota(std::string_view cpu_max);

}  // namespace ray_webhook
