#include "worker_spec_signature.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <vector>

namespace ray_webhook {
namespace {

// Where a value sits in a Pod's spec, as far as the per-Pod fields care.
enum class Role { kSpec, kVolumes, kVolume, kContainers, kContainer, kMounts, kMount, kEnvList, kEnv, kOther };

// Keys as written, quotes included: the signature compares raw tokens.
constexpr std::array<std::string_view, 5> kPerPodSpecFields = {"\"nodeName\"", "\"hostname\"", "\"subdomain\"",
                                                               "\"ephemeralContainers\"", "\"schedulingGates\""};
constexpr std::array<std::string_view, 3> kPerPodEnv = {"\"TPU_WORKER_ID\"", "\"TPU_WORKER_HOSTNAMES\"",
                                                        "\"TPU_NAME\""};
constexpr std::string_view kTokenVolumePrefix = "\"kube-api-access-";
constexpr std::string_view kTokenVolume = "\"kube-api-access\"";

template <std::size_t N>
bool OneOf(const std::array<std::string_view, N>& words, std::string_view word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

// "kube-api-access-" and five lowercase letters or digits (the ServiceAccount admission plugin's
// names.SimpleNameGenerator suffix), as a raw string token.
bool IsGeneratedTokenVolume(std::string_view token) {
  if (token.size() != kTokenVolumePrefix.size() + 6 || !token.starts_with(kTokenVolumePrefix) || token.back() != '"')
    return false;
  return std::all_of(token.begin() + kTokenVolumePrefix.size(), token.end() - 1,
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); });
}

Role ChildRole(Role object, std::string_view key) {
  if (object == Role::kSpec) {
    if (key == "\"volumes\"") return Role::kVolumes;
    if (key == "\"containers\"" || key == "\"initContainers\"") return Role::kContainers;
  } else if (object == Role::kContainer) {
    if (key == "\"volumeMounts\"") return Role::kMounts;
    if (key == "\"env\"") return Role::kEnvList;
  }
  return Role::kOther;
}

Role ElementRole(Role list) {
  switch (list) {
    case Role::kVolumes: return Role::kVolume;
    case Role::kContainers: return Role::kContainer;
    case Role::kMounts: return Role::kMount;
    case Role::kEnvList: return Role::kEnv;
    default: return Role::kOther;
  }
}

// A key as written, quotes included: raw() points after the opening quote; the key ends at the
// first quote no backslash escapes.
std::string_view RawKey(od::raw_json_string key) {
  const char* start = reinterpret_cast<const char*>(key.raw()) - 1;
  const char* p = start + 1;
  while (*p != '"') p += *p == '\\' ? 2 : 1;
  return {start, static_cast<std::size_t>(p + 1 - start)};
}

std::string_view TrimEnd(std::string_view text) {
  const std::size_t last = text.find_last_not_of(" \t\r\n");
  return last == std::string_view::npos ? std::string_view() : text.substr(0, last + 1);
}

class SignatureWriter {
 public:
  SignatureWriter(JsonReader& r, std::string& out) : r_(r), out_(out) {}

  void Value(od::value v, Role role, std::size_t depth) {
    if (depth > kMaxSignatureDepth) return r_.Fail("spec", "nested deeper than 128 levels");
    od::json_type t;
    if (!r_.Ok(v.type().get(t))) return;
    if (t == od::json_type::object) {
      od::object o;
      if (r_.Ok(v.get_object().get(o))) Object(o, role, depth);
    } else if (t == od::json_type::array) {
      od::array a;
      if (r_.Ok(v.get_array().get(a))) Array(a, role, depth);
    } else {
      out_.append(TrimEnd(v.raw_json_token()));
    }
  }

  void Object(od::object o, Role role, std::size_t depth) {
    struct Member {
      std::string_view key;
      std::size_t at, size;  // of the value's text in out_
    };
    const std::size_t start = out_.size();
    std::vector<Member> members;
    for (auto item : o) {
      od::field f;
      if (!r_.Ok(std::move(item).get(f))) return;
      const std::string_view key = RawKey(f.key());
      if (role == Role::kSpec && OneOf(kPerPodSpecFields, key)) continue;
      const std::size_t at = out_.size();
      Value(f.value(), ChildRole(role, key), depth + 1);
      if (r_.failed()) return;
      members.push_back({key, at, out_.size() - at});
    }
    std::stable_sort(members.begin(), members.end(), [](const Member& a, const Member& b) { return a.key < b.key; });
    const auto text = [&](const Member& m) { return std::string_view(out_).substr(m.at, m.size); };
    std::string_view name;
    for (const Member& m : members) {
      if (m.key == "\"name\"") name = text(m);  // the last one, as for every repeated key
    }
    std::string sorted;
    sorted.reserve(out_.size() - start + 2 * members.size() + 2);
    sorted += '{';
    for (std::size_t i = 0; i < members.size(); ++i) {
      const Member& m = members[i];
      if (i + 1 < members.size() && members[i + 1].key == m.key) continue;  // the last value wins
      if (role == Role::kEnv && m.key == "\"value\"" && OneOf(kPerPodEnv, name)) continue;
      std::string_view value = text(m);
      if ((role == Role::kVolume || role == Role::kMount) && m.key == "\"name\"" && IsGeneratedTokenVolume(value))
        value = kTokenVolume;
      if (sorted.size() > 1) sorted += ',';
      sorted.append(m.key).append(":").append(value);
    }
    sorted += '}';
    out_.resize(start);
    out_ += sorted;
  }

  void Array(od::array a, Role role, std::size_t depth) {
    out_ += '[';
    bool first = true;
    for (auto item : a) {
      od::value e;
      if (!r_.Ok(std::move(item).get(e))) return;
      if (!first) out_ += ',';
      first = false;
      Value(e, ElementRole(role), depth + 1);
      if (r_.failed()) return;
    }
    out_ += ']';
  }

 private:
  JsonReader& r_;
  std::string& out_;
};

}  // namespace

void WriteWorkerSpecSignature(od::object pod, JsonReader& r, std::string& out) {
  out.clear();
  SignatureWriter writer(r, out);
  for (auto item : pod) {
    od::field f;
    if (!r.Ok(std::move(item).get(f))) return;
    if (RawKey(f.key()) != "\"spec\"") continue;
    out.clear();  // a repeated spec: the last one counts
    od::json_type t;
    od::object spec;
    od::value v = f.value();
    if (!r.Ok(v.type().get(t)) || t != od::json_type::object) continue;
    if (!r.Ok(v.get_object().get(spec))) return;
    writer.Object(spec, Role::kSpec, 1);
    if (r.failed()) return;
  }
  if (out.empty()) out = "{}";
}

}  // namespace ray_webhook
