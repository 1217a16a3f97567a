// Small readers over the JSON of a stored ray.io object, for the spec rules.
//
// Contract: every reader takes a possibly null pointer and returns null or
// nullopt when the field is absent or of another type, so a rule reads a
// field in one line and skips what it cannot read (the API server has checked
// types against the CRD). Field paths are built as kubectl prints them:
// "spec.workerGroupSpecs[1].minReplicas". Nothing here throws.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace ray_webhook::spec_json {

using Json = nlohmann::json;

// obj[key] when obj is an object that has it, else null.
const Json* Member(const Json* obj, std::string_view key);
// The string, integer or boolean at v; nullopt for absent or another type.
std::optional<std::string_view> String(const Json* v);
std::optional<std::int64_t> Integer(const Json* v);
std::optional<bool> Boolean(const Json* v);
// v is an array (possibly empty) / a non-empty array / a non-empty object / a non-empty string.
bool IsArray(const Json* v);
bool NonEmptyArray(const Json* v);
bool NonEmptyObject(const Json* v);
bool NonEmptyString(const Json* v);
// The field is present with a value other than null.
inline bool Present(const Json* v) { return v != nullptr && !v->is_null(); }
// Member(Member(obj, a), b) and so on, for a dotted path of keys ("spec.headGroupSpec.template").
const Json* At(const Json* obj, std::string_view dotted_keys);
// metadata.annotations[key] / metadata.labels[key] of an object, as a string.
std::optional<std::string_view> Annotation(const Json& object, std::string_view key);
std::optional<std::string_view> Label(const Json& object, std::string_view key);
// The env entry named `name` of a container, or null.
const Json* EnvNamed(const Json* container, std::string_view name);

// "base.key" (or "key" when base is empty) and "base.key[i]".
std::string Field(std::string_view base, std::string_view key);
std::string Item(std::string_view base, std::string_view key, std::size_t i);

// 'text', as a finding's message quotes a value.
std::string SingleQuoted(std::string_view text);

}  // namespace ray_webhook::spec_json
