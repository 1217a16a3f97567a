#include "ray_webhook/core/pod/duplicate_env_rule.h"

#include <algorithm>
#include <string>

#include "ray_webhook/core/model/admission_text.h"

namespace ray_webhook {
namespace {

// kube-apiserver keeps at most 4 KiB of warnings per request; a few lines say enough.
constexpr std::size_t kMaxWarnings = 8;

// Sorting keeps this O(n log n): KubeRay Pods with ~1,500 env entries exist.
void WarnIn(const std::vector<Container>& list, std::vector<std::string>& warnings) {
  std::vector<std::string_view> names;
  for (const Container& c : list) {
    if (c.env.size() < 2) continue;
    names.clear();
    for (const EnvVar& v : c.env) names.push_back(v.name);
    std::sort(names.begin(), names.end());
    for (auto it = names.begin(); it != names.end();) {
      const auto run_end = std::find_if(it, names.end(), [&](std::string_view n) { return n != *it; });
      const auto count = run_end - it;
      if (count > 1) {
        if (warnings.size() == kMaxWarnings) return;
        warnings.push_back(AdmissionWarning("container " + Quote(c.name, 40) + " sets env " + Quote(*it, 40) + " " +
                                            std::to_string(count) + " times; the last one wins"));
      }
      it = run_end;
    }
  }
}

}  // namespace

std::vector<std::string> DuplicateEnvWarnings(const Pod& pod) {
  std::vector<std::string> warnings;
  WarnIn(pod.containers, warnings);
  WarnIn(pod.init_containers, warnings);
  WarnIn(pod.ephemeral_containers, warnings);
  return warnings;
}

}  // namespace ray_webhook
