#include "ray_webhook/core/json/json_parser.h"

#include <algorithm>

namespace ray_webhook {
namespace {

using simdjson::error_code;
using simdjson::SUCCESS;

// Reads a scalar root, to tell valid JSON that is not an object from a bare word.
error_code ReadScalar(od::document& doc, od::json_type type) {
  switch (type) {
    case od::json_type::string: return doc.get_string().error();
    case od::json_type::number: return doc.get_number().error();
    case od::json_type::boolean: return doc.get_bool().error();
    case od::json_type::null: {
      bool null = false;
      const error_code e = doc.is_null().get(null);
      return e != SUCCESS ? e : null ? SUCCESS : simdjson::N_ATOM_ERROR;
    }
    default: return SUCCESS;
  }
}

}  // namespace

JsonParser::JsonParser(std::size_t capacity) {
  // If this fails, iterate() retries per body.
  if (parser_.allocate(capacity) != SUCCESS) return;
}

JsonParser::Root JsonParser::Open(std::string_view body, std::size_t readable_padding, od::document* doc,
                                  od::object* root, error_code* json_error) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) return Root::kEmpty;
  const char* data = body.data();
  std::size_t capacity = body.size() + readable_padding;
  if (readable_padding < simdjson::SIMDJSON_PADDING) {
    if (scratch_.capacity() < body.size() + simdjson::SIMDJSON_PADDING)
      scratch_.reserve(body.size() + simdjson::SIMDJSON_PADDING);
    scratch_.assign(body.data(), body.size());
    data = scratch_.data();
    capacity = scratch_.capacity();
  }
  begin_ = data;
  end_ = data + body.size();
  readable_ = data + capacity;
  od::json_type root_type;
  error_code e = parser_.iterate(simdjson::padded_string_view(data, body.size(), capacity)).get(*doc);
  if (e == SUCCESS) e = doc->type().get(root_type);
  if (e == SUCCESS && root_type != od::json_type::object) {
    e = ReadScalar(*doc, root_type);
    if (e == SUCCESS) return Root::kNotObject;
  }
  if (e == SUCCESS) e = doc->get_object().get(*root);
  if (e != SUCCESS) {
    *json_error = e;
    return Root::kInvalidJson;
  }
  return Root::kObject;
}

error_code JsonParser::CheckEnd(od::document& doc) const {
  // Once the walk is done, the document's raw JSON ends where the next token
  // starts, which is the end of the body when there is none.
  std::string_view whole;
  if (const error_code e = doc.raw_json().get(whole); e != SUCCESS) return e;
  return whole.data() + whole.size() == end_ ? SUCCESS : simdjson::TRAILING_CONTENT;
}

std::size_t JsonParser::ReadableAfter(std::string_view text) const {
  return static_cast<std::size_t>(readable_ - (text.data() + text.size()));
}

std::size_t JsonParser::capacity() const { return std::max(parser_.capacity(), scratch_.capacity()); }

}  // namespace ray_webhook
