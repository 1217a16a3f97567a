// UsableCpus: how many CPUs the server can keep busy, for the number of
// ConnectionLoop workers that take requests at once.
//
// Contract: the CPUs of the process's affinity (taskset, a cpuset cgroup),
// lowered to a CPU quota of its cgroup (cgroup v2 cpu.max, which a Pod's CPU
// limit sets) rounded up; at least one. Reads /proc/self/cgroup and
// /sys/fs/cgroup once per call; a file it cannot read means no limit from it.
// Never throws.
#pragma once

#include <cstddef>
#include <string_view>

namespace ray_webhook {

std::size_t UsableCpus();

// The CPUs a cpu.max line allows ("QUOTA PERIOD" in microseconds, or "max
// PERIOD"), rounded up; 0 when it sets no limit or does not parse.
std::size_t CpusOfQuota(std::string_view cpu_max);

}  // namespace ray_webhook
