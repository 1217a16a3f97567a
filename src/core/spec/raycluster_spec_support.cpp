#include "raycluster_spec_support.h"

#include <algorithm>
#include <charconv>

namespace ray_webhook::cluster_spec {

using spec_json::At;
using spec_json::Boolean;
using spec_json::Field;
using spec_json::IsArray;
using spec_json::Member;
using spec_json::String;

bool ValidatedByKubeRay(const SpecContext& ctx) {
  return ctx.kind == RayObjectKind::kRayCluster || !(ctx.target.version < KubeRayVersion{1, 4, 0});
}

std::optional<std::string_view> ClusterAnnotation(const SpecContext& ctx, std::string_view key) {
  if (ctx.kind == RayObjectKind::kRayCronJob) return std::nullopt;
  return spec_json::Annotation(ctx.object, key);
}

std::string AnnotationPath(std::string_view key) { return "metadata.annotations[" + std::string(key) + "]"; }

void Add(std::vector<SpecFinding>& out, std::string_view rule, std::string path, std::string message) {
  out.push_back(SpecFinding{std::string(rule), std::move(path), std::move(message)});
}

void CheckNameOfClusterOwner(const SpecContext& ctx, std::string_view rule, std::string_view kind, std::string_view why,
                             std::vector<SpecFinding>& out) {
  constexpr std::size_t kMaxLength = 53 - 6;
  const std::string_view name = spec_json::String(spec_json::At(ctx.object, "metadata.name")).value_or("");
  if (name.empty()) return;  // generateName: the API server names it later
  if (name.size() > kMaxLength) {
    Add(out, rule, "metadata.name",
        "a " + std::string(kind) + " name has at most " + std::to_string(kMaxLength) + " characters, so that " +
            std::string(why));
  } else if (!IsDns1035Label(name)) {
    Add(out, rule, "metadata.name",
        "a " + std::string(kind) +
            " name must be a DNS-1035 label: lowercase letters, digits and '-', starting with a letter and ending "
            "with a letter or digit");
  }
}

Json SpecField(const SpecContext& ctx, std::string_view dotted_keys) { return At(ctx.cluster_spec, dotted_keys); }

std::string SpecPath(const SpecContext& ctx, std::string_view dotted_keys) {
  return Field(ctx.cluster_spec_path, dotted_keys);
}

std::string Group::Name() const {
  if (!index) return "the head group";
  const std::optional<std::string_view> name = String(Member(spec, "groupName"));
  return "worker group \"" + std::string(name.value_or("")) + "\"";
}

Group HeadGroup(const SpecContext& ctx) {
  return Group{Member(ctx.cluster_spec, "headGroupSpec"), SpecPath(ctx, "headGroupSpec"), std::nullopt};
}

std::vector<Group> WorkerGroups(const SpecContext& ctx) {
  std::vector<Group> groups;
  Json list = Member(ctx.cluster_spec, "workerGroupSpecs");
  if (!IsArray(list)) return groups;
  std::size_t i = 0;
  for (const Json spec : list.Elements()) {
    groups.push_back(Group{spec, spec_json::Item(ctx.cluster_spec_path, "workerGroupSpecs", i), i});
    ++i;
  }
  return groups;
}

std::vector<Group> AllGroups(const SpecContext& ctx) {
  std::vector<Group> groups = WorkerGroups(ctx);
  groups.insert(groups.begin(), HeadGroup(ctx));
  return groups;
}

Json Containers(const Group& group) { return At(group.spec, "template.spec.containers"); }

Json RayContainer(const Group& group) {
  Json containers = Containers(group);
  return spec_json::NonEmptyArray(containers) ? containers.Front() : Json();
}

std::string ContainersPath(const Group& group) { return group.path + ".template.spec.containers"; }
std::string RayContainerPath(const Group& group) { return ContainersPath(group) + "[0]"; }

std::optional<std::size_t> IndexWhere(Json list, std::string_view key, std::string_view value) {
  std::size_t i = 0;
  for (const Json entry : list.Elements()) {
    if (String(Member(entry, key)) == value) return i;
    ++i;
  }
  return std::nullopt;
}

std::optional<EnvEntry> EnvVar(Json container, std::string_view container_path, std::string_view name) {
  Json env = Member(container, "env");
  const std::optional<std::size_t> i = IndexWhere(env, "name", name);
  if (!i) return std::nullopt;
  return EnvEntry{env.Nth(*i), spec_json::Item(container_path, "env", *i)};
}

std::optional<std::string_view> StartParam(const Group& group, std::string_view key) {
  const std::optional<std::string_view> value = String(Member(Member(group.spec, "rayStartParams"), key));
  if (!value || value->empty()) return std::nullopt;
  return value;
}

std::string StartParamPath(const Group& group, std::string_view key) {
  return group.path + ".rayStartParams[" + std::string(key) + "]";
}

bool AutoscalingEnabled(const SpecContext& ctx) { return Boolean(SpecField(ctx, "enableInTreeAutoscaling")) == true; }

bool AutoscalerVersionV2(const SpecContext& ctx) { return String(SpecField(ctx, "autoscalerOptions.version")) == "v2"; }

bool HeadEnvAsksAutoscalerV2(const SpecContext& ctx) {
  const Group head = HeadGroup(ctx);
  const std::optional<EnvEntry> env = EnvVar(RayContainer(head), RayContainerPath(head), "RAY_enable_autoscaler_v2");
  if (!env) return false;
  const std::optional<std::string_view> value = String(Member(env->entry, "value"));
  return value == "1" || value == "true";
}

bool FaultToleranceOptionsSet(const SpecContext& ctx) {
  return spec_json::Present(SpecField(ctx, "gcsFaultToleranceOptions"));
}

bool EmbeddedBackend(const SpecContext& ctx) {
  return FaultToleranceOptionsSet(ctx) && String(SpecField(ctx, "gcsFaultToleranceOptions.backend")) == "rocksdb";
}

namespace {

bool Lower(char c) { return c >= 'a' && c <= 'z'; }
bool Digit(char c) { return c >= '0' && c <= '9'; }
bool Alnum(char c) { return Lower(c) || Digit(c) || (c >= 'A' && c <= 'Z'); }

// [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters; a DNS-1035 label also starts with a letter.
bool IsDnsLabel(std::string_view name, bool letter_first) {
  if (name.empty() || name.size() > 63) return false;
  if (letter_first ? !Lower(name.front()) : !(Lower(name.front()) || Digit(name.front()))) return false;
  if (name.back() == '-') return false;
  for (const char c : name) {
    if (!Lower(c) && !Digit(c) && c != '-') return false;
  }
  return true;
}

// ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9], at most 63 characters.
bool IsQualifiedPart(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  if (!Alnum(name.front()) || !Alnum(name.back())) return false;
  for (const char c : name) {
    if (!Alnum(c) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

bool IsDns1123Subdomain(std::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  while (true) {
    const std::size_t dot = name.find('.');
    const std::string_view label = name.substr(0, dot);
    if (label.empty() || !IsDnsLabel(label, false)) return false;
    if (dot == std::string_view::npos) return true;
    name.remove_prefix(dot + 1);
  }
}

}  // namespace

bool IsDns1035Label(std::string_view name) { return IsDnsLabel(name, true); }
bool IsDns1123Label(std::string_view name) { return IsDnsLabel(name, false); }

bool IsQualifiedName(std::string_view name) {
  const std::size_t slash = name.find('/');
  if (slash == std::string_view::npos) return IsQualifiedPart(name);
  const std::string_view prefix = name.substr(0, slash);
  const std::string_view rest = name.substr(slash + 1);
  return !prefix.empty() && IsDns1123Subdomain(prefix) && rest.find('/') == std::string_view::npos &&
         IsQualifiedPart(rest);
}

bool IsLabelValue(std::string_view value) { return value.empty() || IsQualifiedPart(value); }

std::optional<std::vector<std::uint64_t>> ParseGenericVersion(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\n' ||
                           text.front() == '\r' || text.front() == '\f')) {
    text.remove_prefix(1);
  }
  if (text.starts_with('v')) text.remove_prefix(1);
  std::vector<std::uint64_t> numbers;
  while (true) {
    std::size_t digits = 0;
    while (digits < text.size() && Digit(text[digits])) ++digits;
    if (digits == 0) {
      // "2." keeps its dot in the suffix; a string with no leading number is no version.
      if (numbers.empty()) return std::nullopt;
      break;
    }
    const std::string_view component = text.substr(0, digits);
    // A generic version refuses a leading zero in its first number only.
    if (numbers.empty() && component.size() > 1 && component.front() == '0') return std::nullopt;
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(component.data(), component.data() + component.size(), n);
    if (ec != std::errc() || end != component.data() + component.size()) return std::nullopt;
    numbers.push_back(n);
    text.remove_prefix(digits);
    if (text.size() < 2 || text.front() != '.' || !Digit(text[1])) break;
    text.remove_prefix(1);
  }
  if (numbers.size() < 2) return std::nullopt;
  return numbers;
}

bool VersionLess(const std::vector<std::uint64_t>& a, const std::vector<std::uint64_t>& b) {
  for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::uint64_t x = i < a.size() ? a[i] : 0;
    const std::uint64_t y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y;
  }
  return false;
}

}  // namespace ray_webhook::cluster_spec
