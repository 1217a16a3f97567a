#include "ray_webhook/audit/cost_facts.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace ray_webhook {
namespace {

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days_from_civil).
std::int64_t DaysFromCivil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

// Exactly n digits at text[at..]; false otherwise.
bool Digits(std::string_view text, std::size_t at, std::size_t n, int* out) {
  if (at + n > text.size()) return false;
  int v = 0;
  for (std::size_t i = at; i < at + n; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    v = v * 10 + (text[i] - '0');
  }
  *out = v;
  return true;
}

bool LeapYear(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

struct Amounts {
  double cpus = 0, gpus = 0;
};

bool IsGpu(std::string_view resource) { return resource.size() > 4 && resource.ends_with("/gpu"); }

// One container: each resource from requests, else from limits.
Amounts ContainerAmounts(const Container& c) {
  Amounts a;
  auto add = [&](std::string_view resource, std::string_view quantity) {
    const std::optional<double> q = ParseQuantity(quantity);
    if (!q) return;
    if (resource == "cpu") a.cpus += *q;
    if (IsGpu(resource)) a.gpus += *q;
  };
  for (const auto& [resource, quantity] : c.requests) add(resource, quantity);
  for (const auto& limit : c.limits) {
    const bool requested =
        std::any_of(c.requests.begin(), c.requests.end(), [&](const auto& req) { return req.first == limit.first; });
    if (!requested) add(limit.first, limit.second);
  }
  return a;
}

Amounts PodAmounts(const Pod& pod) {
  Amounts sum, init;
  for (const Container& c : pod.containers) {
    const Amounts a = ContainerAmounts(c);
    sum.cpus += a.cpus;
    sum.gpus += a.gpus;
  }
  for (const Container& c : pod.init_containers) {
    const Amounts a = ContainerAmounts(c);
    init.cpus = std::max(init.cpus, a.cpus);
    init.gpus = std::max(init.gpus, a.gpus);
  }
  return {std::max(sum.cpus, init.cpus), std::max(sum.gpus, init.gpus)};
}

}  // namespace

std::optional<std::int64_t> ParseRfc3339(std::string_view t) {
  int year, month, day, hour, minute, second;
  if (!Digits(t, 0, 4, &year) || t.size() < 20 || t[4] != '-' || !Digits(t, 5, 2, &month) || t[7] != '-' ||
      !Digits(t, 8, 2, &day) || (t[10] != 'T' && t[10] != 't') || !Digits(t, 11, 2, &hour) || t[13] != ':' ||
      !Digits(t, 14, 2, &minute) || t[16] != ':' || !Digits(t, 17, 2, &second)) {
    return std::nullopt;
  }
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || day > kDays[month - 1] + (month == 2 && LeapYear(year)) || hour > 23 ||
      minute > 59 || second > 60) {  // 60: a leap second, which RFC 3339 allows
    return std::nullopt;
  }
  std::size_t at = 19;
  if (at < t.size() && t[at] == '.') {
    const std::size_t start = ++at;
    while (at < t.size() && t[at] >= '0' && t[at] <= '9') ++at;
    if (at == start) return std::nullopt;
  }
  std::int64_t offset = 0;
  if (at + 1 == t.size() && (t[at] == 'Z' || t[at] == 'z')) {
    ++at;
  } else if (at + 6 == t.size() && (t[at] == '+' || t[at] == '-') && t[at + 3] == ':') {
    int oh, om;
    if (!Digits(t, at + 1, 2, &oh) || !Digits(t, at + 4, 2, &om) || oh > 23 || om > 59) return std::nullopt;
    offset = (t[at] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    at += 6;
  }
  if (at != t.size()) return std::nullopt;
  return DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 + hour * 3600 +
         minute * 60 + second - offset;
}

std::optional<double> ParseQuantity(std::string_view text) {
  double number = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  if (ec != std::errc() || number < 0 || !std::isfinite(number)) return std::nullopt;
  const std::string_view suffix(end, static_cast<std::size_t>(text.data() + text.size() - end));
  struct Scale {
    std::string_view suffix;
    double factor;
  };
  static constexpr Scale kScales[] = {{"", 1},
                                      {"m", 1e-3},
                                      {"k", 1e3},
                                      {"M", 1e6},
                                      {"G", 1e9},
                                      {"T", 1e12},
                                      {"P", 1e15},
                                      {"E", 1e18},
                                      {"Ki", 1024.0},
                                      {"Mi", 1048576.0},
                                      {"Gi", 1073741824.0},
                                      {"Ti", 1099511627776.0},
                                      {"Pi", 1125899906842624.0},
                                      {"Ei", 1152921504606846976.0}};
  for (const Scale& s : kScales) {
    if (suffix == s.suffix) return number * s.factor;
  }
  return std::nullopt;
}

ClusterRequests RequestsOf(const RayClusterSpecView& spec) {
  ClusterRequests out;
  auto add = [&](const Pod& pod, std::int64_t pods) {
    if (pods <= 0) return;
    const Amounts a = PodAmounts(pod);
    out.pods += pods;
    out.cpus += a.cpus * static_cast<double>(pods);
    out.gpus += a.gpus * static_cast<double>(pods);
  };
  if (spec.has_head_group) add(spec.head_group.template_pod, 1);
  for (const RayGroupSpec& g : spec.worker_groups) {
    if (g.suspend) continue;
    // KubeRay keeps replicas within [minReplicas, maxReplicas]: GetWorkerGroupDesiredReplicas,
    // controllers/ray/utils/util.go.
    const std::int64_t replicas = std::max(g.replicas.value_or(0), g.min_replicas.value_or(0));
    add(g.template_pod, replicas * std::max<std::int64_t>(1, g.num_of_hosts));
  }
  return out;
}

}  // namespace ray_webhook
