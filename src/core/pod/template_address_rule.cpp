#include "ray_webhook/core/pod/template_address_rule.h"

#include <algorithm>

#include "ray_start_address.h"
#include "ray_webhook/core/json/ascii_case.h"
#include "ray_webhook/core/model/admission_text.h"

namespace ray_webhook {
namespace {

// utils.RayOverwriteContainerCmdAnnotationKey; pod.go compares the value lowercased.
constexpr std::string_view kOverwriteCmdAnnotation = "ray.io/overwrite-container-cmd";

bool IsTrue(std::optional<std::string_view> value) {
  if (!value || value->size() != 4) return false;
  return AsciiLower(*value) == "true";
}

bool AllDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// BuildPod generates the command only when the Ray container's command and
// args do not already contain "ray start".
bool RunsOwnRayStart(const Pod& t) {
  const Container* ray = RayContainer(t);
  if (!ray) return false;
  for (const auto* list : {&ray->command, &ray->args}) {
    for (std::string_view s : *list) {
      if (s.find("ray start") != std::string_view::npos) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<std::string> BareAddressReason(std::string_view value) {
  if (value.empty() || value.front() == '[') return std::nullopt;  // nothing, or an IPv6 address
  const std::size_t colon = value.find(':');
  const std::string_view host = value.substr(0, colon);
  const std::string_view port = colon == std::string_view::npos ? std::string_view() : value.substr(colon + 1);
  if (host == "$RAY_IP" || host == "${RAY_IP}") {
    return "$RAY_IP is the head service's bare name, which the webhook cannot see inside the variable; use "
           "$FQ_RAY_IP";
  }
  if (host.empty() || host.front() == '$' || host.find('.') != std::string_view::npos || host == "localhost") {
    return std::nullopt;
  }
  if (!AllDigits(port)) {
    return port.empty() ? "it has no port, and only HOST:PORT is qualified" : "its port is not a number";
  }
  if (!IsShortServiceName(host)) return "its host is not a lowercase DNS label";
  return std::nullopt;
}

std::vector<TemplateFinding> CheckTemplateAddresses(const RayObject& object) {
  std::vector<TemplateFinding> findings;
  const bool overwrite_all =
      object.kind == RayObjectKind::kRayCluster && IsTrue(Lookup(object.metadata.annotations, kOverwriteCmdAnnotation));
  for (const TemplateGroup& group : TemplateGroups(object)) {
    if (group.node_type != RayNodeType::kWorker) continue;
    const auto address = Lookup(group.spec->ray_start_params, "address");
    if (!address) continue;
    const Pod& t = group.spec->template_pod;
    if (overwrite_all || IsTrue(Lookup(t.metadata.annotations, kOverwriteCmdAnnotation)) || RunsOwnRayStart(t)) {
      continue;
    }
    const auto reason = BareAddressReason(*address);
    if (!reason) continue;
    TemplateFinding f;
    f.field_path = group.path + ".rayStartParams.address";
    f.summary = Quote(*address, 64) + " stays a bare name: " + *reason;
    f.detail = "group " + Quote(group.name, 63) + " (" + f.field_path + "): " + f.summary +
               ". Workers reach the head by this name only where the cluster's DNS resolves bare service names";
    findings.push_back(std::move(f));
  }
  return findings;
}

}  // namespace ray_webhook
