#include "spec_json.h"

namespace ray_webhook::spec_json {

namespace {

// An empty array and an empty object in a document of their own, which
// nothing parses again: what Elements() and Members() give for a value of
// another type, so that a loop over such a field runs zero times.
struct EmptyContainers {
  simdjson::dom::parser parser;
  simdjson::dom::array array;
  simdjson::dom::object object;
  EmptyContainers() {
    simdjson::dom::array both;
    if (parser.parse(std::string_view("[[],{}]")).get(both) != simdjson::SUCCESS) return;
    auto it = both.begin();
    array = (*it).get_array().value_unsafe();
    ++it;
    object = (*it).get_object().value_unsafe();
  }
};

const EmptyContainers& Empties() {
  static const EmptyContainers empties;
  return empties;
}

}  // namespace

std::size_t Json::Size() const {
  if (!present_) return 0;
  switch (element_.type()) {
    case simdjson::dom::element_type::ARRAY: return element_.get_array().value_unsafe().size();
    case simdjson::dom::element_type::OBJECT: return element_.get_object().value_unsafe().size();
    case simdjson::dom::element_type::STRING: return element_.get_string().value_unsafe().size();
    default: return 0;
  }
}

simdjson::dom::array Json::Elements() const {
  if (!IsArray()) return Empties().array;
  return element_.get_array().value_unsafe();
}

simdjson::dom::object Json::Members() const {
  if (!IsObject()) return Empties().object;
  return element_.get_object().value_unsafe();
}

Json Json::Front() const {
  const simdjson::dom::array array = Elements();
  if (array.begin() == array.end()) return {};
  return *array.begin();
}

Json Json::Nth(std::size_t i) const {
  simdjson::dom::element element;
  if (!IsArray() || Elements().at(i).get(element) != simdjson::SUCCESS) return {};
  return element;
}

Json Member(Json obj, std::string_view key) {
  simdjson::dom::element value;
  if (!obj.IsObject() || obj.Members().at_key(key).get(value) != simdjson::SUCCESS) return {};
  return value;
}

std::optional<std::string_view> String(Json v) {
  if (!v.IsString()) return std::nullopt;
  return v.Element().get_string().value_unsafe();
}

std::optional<std::int64_t> Integer(Json v) {
  if (!v) return std::nullopt;
  // An integer is a number written without fraction or exponent, signed or
  // not (1.0 and 1e2 are not).
  switch (v.Element().type()) {
    case simdjson::dom::element_type::INT64: return v.Element().get_int64().value_unsafe();
    case simdjson::dom::element_type::UINT64: return static_cast<std::int64_t>(v.Element().get_uint64().value_unsafe());
    default: return std::nullopt;
  }
}

std::optional<bool> Boolean(Json v) {
  if (!v || !v.Element().is_bool()) return std::nullopt;
  return v.Element().get_bool().value_unsafe();
}

bool IsArray(Json v) { return v.IsArray(); }
bool NonEmptyArray(Json v) { return v.IsArray() && !v.Empty(); }
bool NonEmptyObject(Json v) { return v.IsObject() && !v.Empty(); }
bool NonEmptyString(Json v) { return v.IsString() && !v.Empty(); }

Json At(Json obj, std::string_view dotted_keys) {
  while (obj && !dotted_keys.empty()) {
    const std::size_t dot = dotted_keys.find('.');
    obj = Member(obj, dotted_keys.substr(0, dot));
    dotted_keys.remove_prefix(dot == std::string_view::npos ? dotted_keys.size() : dot + 1);
  }
  return obj;
}

std::optional<std::string_view> Annotation(Json object, std::string_view key) {
  return String(Member(At(object, "metadata.annotations"), key));
}

std::optional<std::string_view> Label(Json object, std::string_view key) {
  return String(Member(At(object, "metadata.labels"), key));
}

Json EnvNamed(Json container, std::string_view name) {
  for (const simdjson::dom::element e : Member(container, "env").Elements()) {
    if (String(Member(e, "name")) == name) return e;
  }
  return {};
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
