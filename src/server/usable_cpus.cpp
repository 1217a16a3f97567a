#include "ray_webhook/server/usable_cpus.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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

std::string_view TrimEnd(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

bool Contains(const std::vector<std::string_view>& items, std::string_view item) {
  return std::find(items.begin(), items.end(), item) != items.end();
}

// One cgroup hierarchy the process belongs to, as its own mount namespace sees it.
struct CgroupHierarchy {
  std::string mount_point;  // where it is mounted, under root
  std::string directory;    // the process's cgroup in it, under root
};

// The mount of a hierarchy: cgroup2, or (v1_cpu) the cgroup v1
// mount whose options name the cpu controller. proc(5): field 5 is the mount
// point, and the file system type and its options follow the " - " separator.
bool FindMount(std::string_view mountinfo, bool v1_cpu, std::string* mount_point) {
  for (std::string_view line : Split(mountinfo, '\n')) {
    const std::size_t dash = line.find(" - ");
    if (dash == std::string_view::npos) continue;
    const auto fields = Split(line.substr(0, dash), ' ');
    const auto after = Split(line.substr(dash + 3), ' ');
    if (fields.size() < 5 || after.size() < 3) continue;
    const bool match = v1_cpu ? after[0] == "cgroup" && Contains(Split(after[2], ','), "cpu") : after[0] == "cgroup2";
    if (!match) continue;
    *mount_point = std::string(fields[4]);
    return true;
  }
  return false;
}

// The process's path in a hierarchy, from /proc/self/cgroup ("ID:CONTROLLERS:PATH";
// cgroup v2's line is "0::PATH").
bool FindPath(std::string_view proc_cgroup, bool v1_cpu, std::string* path) {
  for (std::string_view line : Split(proc_cgroup, '\n')) {
    const std::size_t first = line.find(':');
    const std::size_t second = first == std::string_view::npos ? first : line.find(':', first + 1);
    if (second == std::string_view::npos) continue;
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const bool match =
        v1_cpu ? Contains(Split(controllers, ','), "cpu") : line.substr(0, first) == "0" && controllers.empty();
    if (!match) continue;
    *path = std::string(line.substr(second + 1));
    return true;
  }
  return false;
}

bool FindHierarchy(const std::string& prefix, std::string_view mountinfo, std::string_view proc_cgroup, bool v1_cpu,
                   CgroupHierarchy* out) {
  std::string mount_point, path;
  if (!FindMount(mountinfo, v1_cpu, &mount_point) || !FindPath(proc_cgroup, v1_cpu, &path)) return false;
  // A container that sees only its own cgroup has it mounted at the mount
  // point, while /proc/self/cgroup may still name the node's full path (v1, no
  // cgroup namespace): that path does not exist under the mount, and the walk
  // up in LowestQuota ends at the mount point, the container's cgroup.
  out->mount_point = prefix + mount_point;
  out->directory = out->mount_point + (path == "/" ? "" : path);
  return true;
}

// The lowest quota on the way from the process's cgroup up to the mount: a
// Pod's limit may be set on the container's cgroup or on the Pod's, above it.
std::size_t LowestQuota(const CgroupHierarchy& hierarchy, bool v1) {
  std::size_t lowest = 0;
  for (std::string dir = hierarchy.directory;;) {
    // cgroup v1 keeps cpu.max's two numbers in two files.
    const std::size_t cpus = v1 ? CpusOfQuota(std::string(TrimEnd(ReadFile(dir + "/cpu.cfs_quota_us"))) + " " +
                                              ReadFile(dir + "/cpu.cfs_period_us"))
                                : CpusOfQuota(ReadFile(dir + "/cpu.max"));
    if (cpus != 0) lowest = lowest == 0 ? cpus : std::min(lowest, cpus);
    if (dir.size() <= hierarchy.mount_point.size()) return lowest;
    dir = dir.substr(0, dir.rfind('/'));
  }
}

}  // namespace

std::size_t CpusOfQuota(std::string_view cpu_max) {
  cpu_max = TrimEnd(cpu_max);
  const auto space = cpu_max.find(' ');
  if (space == std::string_view::npos) return 0;
  unsigned long long quota = 0, period = 0;
  const auto parse = [](std::string_view text, unsigned long long* out) {
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
    return error == std::errc() && end == text.data() + text.size();
  };
  if (!parse(cpu_max.substr(0, space), &quota) || !parse(cpu_max.substr(space + 1), &period) || quota == 0 ||
      period == 0) {
    return 0;  // "max" or "-1" (no limit), or not a quota
  }
  return static_cast<std::size_t>((quota + period - 1) / period);
}

std::size_t CgroupCpuLimit(const std::string& root) {
  std::string prefix = root;  // what goes before an absolute path: "" for "/"
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  const std::string mountinfo = ReadFile(prefix + "/proc/self/mountinfo");
  const std::string proc_cgroup = ReadFile(prefix + "/proc/self/cgroup");
  std::size_t limit = 0;
  for (const bool v1 : {false, true}) {
    CgroupHierarchy hierarchy;
    if (!FindHierarchy(prefix, mountinfo, proc_cgroup, v1, &hierarchy)) continue;
    const std::size_t cpus = LowestQuota(hierarchy, v1);
    if (cpus != 0) limit = limit == 0 ? cpus : std::min(limit, cpus);
  }
  return limit;
}

std::size_t UsableCpus() {
  std::size_t cpus = AffinityCpus();
  const std::size_t limit = CgroupCpuLimit("/");
  if (limit != 0) cpus = cpus == 0 ? limit : std::min(cpus, limit);
  return std::max<std::size_t>(cpus, 1);
}

}  // namespace ray_webhook
