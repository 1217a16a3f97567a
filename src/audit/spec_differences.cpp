#include "spec_differences.h"

#include <algorithm>

namespace ray_webhook {
namespace {

using Json = nlohmann::json;

// Appends where `to` differs from `from` under `path`, at most limit entries. Lists are compared as
// insertions and removals around their common first and last items, so one mount added in the middle is
// one "added" entry, not a change of every item after it. Recursion follows the documents' depth, which
// the worker spec signature bounds.
void Diff(const Json& from, const Json& to, const std::string& path, std::size_t limit, std::vector<std::string>& out) {
  if (out.size() >= limit || from == to) return;
  if (from.is_object() && to.is_object()) {
    for (auto it = from.begin(); it != from.end(); ++it) {
      if (!to.contains(it.key())) {
        out.push_back(path + "." + it.key() + " (removed)");
      } else {
        Diff(*it, to[it.key()], path + "." + it.key(), limit, out);
      }
      if (out.size() >= limit) return;
    }
    for (auto it = to.begin(); it != to.end() && out.size() < limit; ++it) {
      if (!from.contains(it.key())) out.push_back(path + "." + it.key() + " (added)");
    }
    return;
  }
  if (from.is_array() && to.is_array()) {
    const std::size_t na = from.size(), nb = to.size();
    std::size_t prefix = 0;
    while (prefix < na && prefix < nb && from[prefix] == to[prefix]) ++prefix;
    std::size_t suffix = 0;
    while (suffix < na - prefix && suffix < nb - prefix && from[na - 1 - suffix] == to[nb - 1 - suffix]) ++suffix;
    const std::size_t ma = na - prefix - suffix, mb = nb - prefix - suffix;
    const auto at = [&](std::size_t i) { return path + "[" + std::to_string(i) + "]"; };
    for (std::size_t i = 0; i < std::min(ma, mb) && out.size() < limit; ++i) {
      Diff(from[prefix + i], to[prefix + i], at(prefix + i), limit, out);
    }
    for (std::size_t i = std::min(ma, mb); i < mb && out.size() < limit; ++i)
      out.push_back(at(prefix + i) + " (added)");
    for (std::size_t i = std::min(ma, mb); i < ma && out.size() < limit; ++i) {
      out.push_back(at(prefix + i) + " (removed)");
    }
    return;
  }
  out.push_back(path + " (changed)");
}

}  // namespace

std::vector<std::string> SpecDifferences(const Json& from, const Json& to, std::size_t max) {
  std::vector<std::string> out;
  Diff(from, to, "spec", max + 1, out);
  if (out.size() > max) {
    out.resize(max);
    out.push_back("...");
  }
  return out;
}

}  // namespace ray_webhook
