#include "spec_json.h"

namespace ray_webhook::spec_json {

const Json* Member(const Json* obj, std::string_view key) {
  if (obj == nullptr || !obj->is_object()) return nullptr;
  const auto it = obj->find(key);
  return it == obj->end() ? nullptr : &*it;
}

std::optional<std::string_view> String(const Json* v) {
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return std::string_view(v->get_ref<const std::string&>());
}

std::optional<std::int64_t> Integer(const Json* v) {
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  return v->get<std::int64_t>();
}

std::optional<bool> Boolean(const Json* v) {
  if (v == nullptr || !v->is_boolean()) return std::nullopt;
  return v->get<bool>();
}

bool IsArray(const Json* v) { return v != nullptr && v->is_array(); }
bool NonEmptyArray(const Json* v) { return IsArray(v) && !v->empty(); }
bool NonEmptyObject(const Json* v) { return v != nullptr && v->is_object() && !v->empty(); }
bool NonEmptyString(const Json* v) {
  return v != nullptr && v->is_string() && !v->get_ref<const std::string&>().empty();
}

const Json* At(const Json* obj, std::string_view dotted_keys) {
  while (obj != nullptr && !dotted_keys.empty()) {
    const std::size_t dot = dotted_keys.find('.');
    obj = Member(obj, dotted_keys.substr(0, dot));
    dotted_keys.remove_prefix(dot == std::string_view::npos ? dotted_keys.size() : dot + 1);
  }
  return obj;
}

std::optional<std::string_view> Annotation(const Json& object, std::string_view key) {
  return String(Member(At(&object, "metadata.annotations"), key));
}

std::optional<std::string_view> Label(const Json& object, std::string_view key) {
  return String(Member(At(&object, "metadata.labels"), key));
}

const Json* EnvNamed(const Json* container, std::string_view name) {
  const Json* env = Member(container, "env");
  if (!IsArray(env)) return nullptr;
  for (const Json& e : *env) {
    if (String(Member(&e, "name")) == name) return &e;
  }
  return nullptr;
}

std::string Field(std::string_view base, std::string_view key) {
  std::string out(base);
  if (!out.empty()) out += '.';
  out += key;
  return out;
}

std::string Item(std::string_view base, std::string_view key, std::size_t i) {
  return Field(base, key) + "[" + std::to_string(i) + "]";
}

std::string SingleQuoted(std::string_view text) {
  // Built by appending: GCC 12 warns (a false -Wstringop-overflow) on "'" + std::string(...).
  std::string out;
  out.reserve(text.size() + 2);
  out += '\'';
  out.append(text);
  out += '\'';
  return out;
}

}  // namespace ray_webhook::spec_json
