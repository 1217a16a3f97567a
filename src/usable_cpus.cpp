#include "ray_webhook/usable_cpus.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>

namespace ray_webhook {
namespace {

std::size_t AffinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return static_cast<std::size_t>(CPU_COUNT(&set));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The process's cgroup v2 directory: the "0::/PATH" line of /proc/self/cgroup.
std::string CgroupDirectory() {
  std::istringstream lines(ReadFile("/proc/self/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
  }
  return "";
}

bool ParseNumber(std::string_view text, unsigned long long* out) {
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::size_t CpusOfQuota(std::string_view cpu_max) {
  while (!cpu_max.empty() && (cpu_max.back() == '\n' || cpu_max.back() == ' ')) cpu_max.remove_suffix(1);
  const auto space = cpu_max.find(' ');
  if (space == std::string_view::npos) return 0;
  unsigned long long quota = 0, period = 0;
  if (!ParseNumber(cpu_max.substr(0, space), &quota) || !ParseNumber(cpu_max.substr(space + 1), &period) ||
      quota == 0 || period == 0) {
    return 0;  // "max" (no limit) or not a cpu.max line
  }
  return static_cast<std::size_t>((quota + period - 1) / period);
}

std::size_t UsableCpus() {
  std::size_t cpus = AffinityCpus();
  // A Pod's CPU limit is a quota, not fewer CPUs; it may be set on the
  // process's cgroup or any above it.
  std::string dir = CgroupDirectory();
  while (!dir.empty()) {
    const std::size_t quota = CpusOfQuota(ReadFile(dir + "/cpu.max"));
    if (quota != 0) cpus = cpus == 0 ? quota : std::min(cpus, quota);
    if (dir == "/sys/fs/cgroup") break;
    dir = dir.substr(0, dir.rfind('/'));
  }
  return std::max<std::size_t>(cpus, 1);
}

}  // namespace ray_webhook
