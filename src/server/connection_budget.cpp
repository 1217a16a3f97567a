#include "connection_budget.h"

#include <spdlog/spdlog.h>

#include "ray_webhook/net/open_file_limit.h"

namespace ray_webhook {
namespace {

// Descriptors kept back from --max-connections: listeners, the event loops'
// own, certificate and token reads, the Kubernetes API connections.
constexpr std::size_t kReservedDescriptors = 64;

}  // namespace

std::size_t ConnectionBudget(std::size_t requested) {
  const std::size_t descriptors = RaiseOpenFileLimit();
  if (descriptors >= requested + kReservedDescriptors) return requested;
  const std::size_t budget =
      descriptors > 2 * kReservedDescriptors ? descriptors - kReservedDescriptors : kReservedDescriptors;
  spdlog::warn("the open-file limit is {}: serving at most {} connections instead of --max-connections {}", descriptors,
               budget, requested);
  return budget;
}

}  // namespace ray_webhook
