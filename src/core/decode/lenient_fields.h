// Lenient reads, for what the API server writes or the audit alone needs
// (status, timestamps, replicas, resources): a value of the wrong type reads
// as absent and is no error, so that admission, which shares the decoders,
// judges nothing it did not judge before. Invalid JSON still fails the reader.
//
// Contract: each reads v once; out is left as it was unless v has the type asked for.
#pragma once

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "ray_webhook/core/json/json_reader.h"

namespace ray_webhook {

inline bool LenientIs(od::value& v, JsonReader& r, od::json_type want) {
  od::json_type t;
  return r.Ok(v.type().get(t)) && t == want;
}

inline void LenientString(od::value v, JsonReader& r, std::string_view* out) {
  if (LenientIs(v, r, od::json_type::string)) r.Ok(v.get_string().get(*out));
}

inline void LenientBool(od::value v, JsonReader& r, bool* out) {
  if (LenientIs(v, r, od::json_type::boolean)) r.Ok(v.get_bool().get(*out));
}

// An integer; a fraction or a number beyond int64 reads as absent.
template <typename Int>
inline void LenientInt(od::value v, JsonReader& r, Int* out) {
  if (!LenientIs(v, r, od::json_type::number)) return;
  std::int64_t n = 0;
  if (v.get_int64().get(n) == simdjson::SUCCESS) *out = n;
}

// visit(key, value) for each field of an object; nothing for any other type.
template <typename Visit>
inline void LenientFields(od::value v, JsonReader& r, Visit&& visit) {
  od::object o;
  if (LenientIs(v, r, od::json_type::object) && r.Ok(v.get_object().get(o))) r.Fields(o, std::forward<Visit>(visit));
}

// visit(element) for each element of an array; nothing for any other type.
template <typename Visit>
inline void LenientElements(od::value v, JsonReader& r, Visit&& visit) {
  od::array a;
  if (!LenientIs(v, r, od::json_type::array) || !r.Ok(v.get_array().get(a))) return;
  for (auto item : a) {
    od::value e;
    if (!r.Ok(std::move(item).get(e))) return;
    visit(e);
    if (r.failed()) return;
  }
}

// A Kubernetes ResourceList: each quantity as written, a string or (from hand-written YAML) a number.
inline void LenientQuantities(od::value v, JsonReader& r,
                              std::vector<std::pair<std::string_view, std::string_view>>* out) {
  out->clear();
  LenientFields(v, r, [&](std::string_view k, od::value q) {
    od::json_type t;
    if (!r.Ok(q.type().get(t))) return;
    std::string_view s;
    if (t == od::json_type::string) {
      if (!r.Ok(q.get_string().get(s))) return;
    } else if (t == od::json_type::number) {
      s = q.raw_json_token();
      while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\r' || s.back() == '\t'))
        s.remove_suffix(1);
    } else {
      return;
    }
    out->emplace_back(k, s);
  });
}

}  // namespace ray_webhook
