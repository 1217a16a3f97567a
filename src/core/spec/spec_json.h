// Small readers over the JSON of a stored ray.io object, for the spec rules,
// as a typed view (Json) over simdjson's DOM: the rules look fields up in any
// order, which the DOM's tape answers without a second parse.
//
// Contract: a Json is a view that may be absent (a field the object lacks);
// it reads the document of the simdjson::dom::parser that parsed it and is
// valid as long as that parser is and parses nothing else. Every reader takes
// a possibly absent Json and returns an absent Json or nullopt when the field
// is absent or of another type, so a rule reads a field in one line and skips
// what it cannot read (the API server has checked types against the CRD).
// Field paths are built as kubectl prints them:
// "spec.workerGroupSpecs[1].minReplicas". Nothing here throws.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ray_webhook::spec_json {

class Json {
 public:
  Json() = default;                                                            // absent
  Json(simdjson::dom::element element) : element_(element), present_(true) {}  // NOLINT: a view of any element

  // Present in the object (its value may still be JSON null).
  explicit operator bool() const { return present_; }
  bool IsNull() const { return present_ && element_.is_null(); }
  bool IsObject() const { return present_ && element_.is_object(); }
  bool IsArray() const { return present_ && element_.is_array(); }
  bool IsString() const { return present_ && element_.is_string(); }
  // The entries of an array or object, the characters of a string; 0 for anything else.
  std::size_t Size() const;
  bool Empty() const { return Size() == 0; }
  // The elements of an array and the members of an object (key and value), in
  // the object's order; empty for anything else, so a loop needs no check.
  simdjson::dom::array Elements() const;
  simdjson::dom::object Members() const;
  // The first element of a non-empty array, else absent; element i of an
  // array, else absent (simdjson walks the tape to it: for short lists).
  Json Front() const;
  Json Nth(std::size_t i) const;
  // The element itself; only for a present Json.
  simdjson::dom::element Element() const { return element_; }

 private:
  simdjson::dom::element element_;
  bool present_ = false;
};

// obj[key] when obj is an object that has it, else absent.
Json Member(Json obj, std::string_view key);
// The string, integer or boolean at v; nullopt for absent or another type.
std::optional<std::string_view> String(Json v);
std::optional<std::int64_t> Integer(Json v);
std::optional<bool> Boolean(Json v);
// v is an array (possibly empty) / a non-empty array / a non-empty object / a non-empty string.
bool IsArray(Json v);
bool NonEmptyArray(Json v);
bool NonEmptyObject(Json v);
bool NonEmptyString(Json v);
// The field is present with a value other than null.
inline bool Present(Json v) { return v && !v.IsNull(); }
// Member(Member(obj, a), b) and so on, for a dotted path of keys ("spec.headGroupSpec.template").
Json At(Json obj, std::string_view dotted_keys);
// metadata.annotations[key] / metadata.labels[key] of an object, as a string.
std::optional<std::string_view> Annotation(Json object, std::string_view key);
std::optional<std::string_view> Label(Json object, std::string_view key);
// The env entry named `name` of a container, or absent.
Json EnvNamed(Json container, std::string_view name);

// "base.key" (or "key" when base is empty) and "base.key[i]".
std::string Field(std::string_view base, std::string_view key);
std::string Item(std::string_view base, std::string_view key, std::size_t i);

// 'text', as a finding's message quotes a value.
std::string SingleQuoted(std::string_view text);

}  // namespace ray_webhook::spec_json
