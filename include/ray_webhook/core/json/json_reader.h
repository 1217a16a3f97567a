// JsonReader: the decoders' typed access to a simdjson On Demand value, and
// the first failure met while reading it.
//
// Contract: every accessor reads the value it is given once, front to back,
// and records the first failure only: invalid JSON (a simdjson error code) or
// a field of the wrong type, as "<path>: <what>". After a failure every
// accessor does nothing, so a decoder may keep calling them and check
// failed() once. Null counts as an absent field everywhere. A repeated key is
// visited again, so its last value wins, as in Go's encoding/json. Paths are
// given relative to the object a decoder reads and made absolute by its caller
// with Prefix(), so that a path is spelled out only when it is reported. All
// inline: this is the inner loop of every review.
#pragma once

#include <simdjson.h>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ray_webhook {

// Only the decoders include this header; the rest of the core never sees simdjson.
namespace od = simdjson::ondemand;

class JsonReader {
 public:
  bool failed() const { return json_error_ != simdjson::SUCCESS || !error_.empty(); }
  simdjson::error_code json_error() const { return json_error_; }
  const std::string& error() const { return error_; }

  void Fail(std::string_view path, std::string_view what) {
    if (failed()) return;
    error_.reserve(path.size() + 2 + what.size());
    error_.append(path).append(": ").append(what);
  }
  // Makes a relative error path absolute once the failure is known.
  void Prefix(std::string_view prefix) {
    if (!error_.empty()) error_.insert(0, prefix);
  }
  // For a decoder that read a value on behalf of this one, with its own reader.
  void Adopt(const JsonReader& other) {
    if (failed()) return;
    json_error_ = other.json_error_;
    error_ = other.error_;
  }

  // False, with the error recorded, unless e is SUCCESS.
  bool Ok(simdjson::error_code e) {
    if (e != simdjson::SUCCESS && !failed()) json_error_ = e;
    return e == simdjson::SUCCESS;
  }

  // An array element and its JSON type; false, with the error recorded, when
  // either cannot be read.
  template <typename Item>
  bool Element(Item&& item, od::value* e, od::json_type* t) {
    return Ok(std::forward<Item>(item).get(*e)) && Ok(e->type().get(*t));
  }

  // Calls visit(key, value) for each field in document order until it fails.
  template <typename Visit>
  void Fields(od::object obj, Visit&& visit) {
    for (auto item : obj) {
      od::field field;
      std::string_view key;
      if (!Ok(std::move(item).get(field)) || !Ok(field.unescaped_key().get(key))) return;
      visit(key, field.value());
      if (failed()) return;
    }
  }

  // Null leaves *out untouched; other non-strings fail.
  void String(od::value v, std::string_view path, std::string_view* out) {
    od::json_type t;
    if (!Ok(v.type().get(t)) || t == od::json_type::null) return;
    if (t != od::json_type::string) return Fail(path, "expected a string");
    Ok(v.get_string().get(*out));
  }

  // As String, and says whether a string was there.
  void StringOrNull(od::value v, std::string_view path, std::string_view* out, bool* present) {
    od::json_type t;
    if (!Ok(v.type().get(t)) || t == od::json_type::null) return;
    if (t != od::json_type::string) return Fail(path, "expected a string");
    *present = Ok(v.get_string().get(*out));
  }

  // Null leaves *out untouched; other non-booleans fail.
  void Bool(od::value v, std::string_view path, bool* out) {
    od::json_type t;
    if (!Ok(v.type().get(t)) || t == od::json_type::null) return;
    if (t != od::json_type::boolean) return Fail(path, "expected a boolean");
    Ok(v.get_bool().get(*out));
  }

  // False for null; other non-objects fail.
  bool Object(od::value v, std::string_view path, od::object* out) {
    od::json_type t;
    if (!Ok(v.type().get(t)) || t == od::json_type::null) return false;
    if (t != od::json_type::object) {
      Fail(path, "expected an object");
      return false;
    }
    return Ok(v.get_object().get(*out));
  }

  // False for null; other non-arrays fail.
  bool Array(od::value v, std::string_view path, od::array* out) {
    od::json_type t;
    if (!Ok(v.type().get(t)) || t == od::json_type::null) return false;
    if (t != od::json_type::array) {
      Fail(path, "expected an array");
      return false;
    }
    return Ok(v.get_array().get(*out));
  }

  // Calls visit(object) for each element of a; elements that are not
  // objects fail with what_else at path.
  template <typename Visit>
  void Objects(od::array a, std::string_view path, std::string_view what_else, Visit&& visit) {
    for (auto item : a) {
      od::value e;
      od::json_type t;
      if (!Element(std::move(item), &e, &t)) return;
      od::object o;
      if (t != od::json_type::object) return Fail(path, what_else);
      if (!Ok(e.get_object().get(o))) return;
      visit(o);
      if (failed()) return;
    }
  }

  // Null or absent is an empty list; *out is cleared first.
  void Strings(od::value v, std::string_view path, std::vector<std::string_view>* out) {
    out->clear();
    od::array a;
    if (!Array(v, path, &a)) return;
    for (auto item : a) {
      od::value e;
      od::json_type t;
      if (!Element(std::move(item), &e, &t)) return;
      if (t != od::json_type::string) return Fail(path, "expected an array of strings");
      std::string_view s;
      if (!Ok(e.get_string().get(s))) return;
      out->push_back(s);
    }
  }

  // An object of strings (labels, annotations, rayStartParams), in document
  // order, into any vector of (key, value) string_view pairs (the model's
  // StringMap, which this part does not see); *out is cleared first.
  template <typename Pairs>
  void Map(od::value v, std::string_view path, Pairs* out) {
    out->clear();
    od::object m;
    if (!Object(v, path, &m)) return;
    Fields(m, [&](std::string_view key, od::value value) {
      od::json_type t;
      if (!Ok(value.type().get(t))) return;
      if (t != od::json_type::string) return Fail(path, "expected string values");
      std::string_view s;
      if (Ok(value.get_string().get(s))) out->emplace_back(key, s);
    });
  }

 private:
  simdjson::error_code json_error_ = simdjson::SUCCESS;
  std::string error_;
};

}  // namespace ray_webhook
