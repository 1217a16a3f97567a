#include "ray_webhook/core/decode/document_index.h"

#include "ray_webhook/core/json/json_parser.h"

namespace ray_webhook {
namespace {

// Deeper than `limit`, counting each object or list opened outside a string. A byte scan, so that
// depth is bounded before anything walks the document, whatever walks it later.
bool DeeperThan(std::string_view text, std::size_t limit) {
  std::size_t depth = 0;
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    const char c = *p++;
    if (c == '"') {
      while (p < end && *p != '"') p += *p == '\\' ? 2 : 1;
      ++p;
    } else if (c == '{' || c == '[') {
      if (++depth > limit) return true;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return false;
}

std::string_view Trim(std::string_view text) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(" \t\r\n") + 1 - first);
}

// A string field's value; anything else leaves *out empty.
void StringField(od::value v, JsonReader& r, std::string_view* out) {
  od::json_type t;
  if (r.Ok(v.type().get(t)) && t == od::json_type::string) r.Ok(v.get_string().get(*out));
}

// An object's value, or false for anything else.
bool ObjectField(od::value v, JsonReader& r, od::object* out) {
  od::json_type t;
  return r.Ok(v.type().get(t)) && t == od::json_type::object && r.Ok(v.get_object().get(*out));
}

}  // namespace

struct DocumentIndex::Impl {
  // Documents come one at a time: the buffers grow to the largest.
  JsonParser parser{0};
  std::string error;
  Outline root;
  std::string_view continue_token;
  Items items_shape = Items::kAbsent;
  std::vector<Outline> items;

  void Reset() {
    error.clear();
    root = {};
    continue_token = {};
    items_shape = Items::kAbsent;
    items.clear();
  }

  // The fields an outline keeps, of an object; `other` is given every other field.
  template <typename Other>
  void ReadFields(od::object o, JsonReader& r, Outline& out, std::string_view* continue_out, Other&& other) {
    out.object = true;
    r.Fields(o, [&](std::string_view key, od::value v) {
      if (key == "kind") {
        StringField(v, r, &out.kind);
      } else if (key == "apiVersion") {
        StringField(v, r, &out.api_version);
      } else if (key == "metadata") {
        od::object meta;
        if (!ObjectField(v, r, &meta)) return;
        r.Fields(meta, [&](std::string_view k, od::value m) {
          if (k == "name") {
            StringField(m, r, &out.name);
          } else if (k == "generateName") {
            StringField(m, r, &out.generate_name);
          } else if (k == "namespace") {
            StringField(m, r, &out.namespace_name);
          } else if (k == "continue" && continue_out != nullptr) {
            StringField(m, r, continue_out);
          }
        });
      } else {
        other(key, v);
      }
    });
  }

  // One item of "items": its fields, then, from its start again, its text.
  void IndexItem(od::value v, JsonReader& r) {
    Outline& item = items.emplace_back();
    od::object o;
    if (!ObjectField(v, r, &o)) return;
    ReadFields(o, r, item, nullptr, [](std::string_view, od::value) {});
    bool reset = false;
    std::string_view text;
    if (r.failed() || !r.Ok(o.reset().get(reset)) || !r.Ok(o.raw_json().get(text))) return;
    item.text = Trim(text);
    item.readable_padding = parser.ReadableAfter(item.text);
  }

  void IndexItems(od::value v, JsonReader& r) {
    // A repeated key's last value wins, as for the decoders.
    items.clear();
    od::json_type t;
    if (!r.Ok(v.type().get(t))) return;
    od::array list;
    if (t == od::json_type::null) {
      items_shape = Items::kNull;
    } else if (t != od::json_type::array || !r.Ok(v.get_array().get(list))) {
      items_shape = Items::kOther;
    } else {
      items_shape = Items::kList;
      for (auto element : list) {
        od::value e;
        if (!r.Ok(std::move(element).get(e))) return;
        IndexItem(e, r);
        if (r.failed()) return;
      }
    }
  }
};

DocumentIndex::DocumentIndex() : impl_(std::make_unique<Impl>()) {}
DocumentIndex::~DocumentIndex() = default;

DocumentIndex::Shape DocumentIndex::Read(std::string_view json, std::size_t max_depth, std::size_t readable_padding) {
  Impl& m = *impl_;
  m.Reset();
  if (DeeperThan(json, max_depth)) return Shape::kTooDeep;
  od::document doc;
  od::object root;
  simdjson::error_code e = simdjson::SUCCESS;
  switch (m.parser.Open(json, readable_padding, &doc, &root, &e)) {
    case JsonParser::Root::kObject: break;
    case JsonParser::Root::kEmpty: return Shape::kNull;
    case JsonParser::Root::kNotObject: {
      // Open read the scalar to tell it from a bare word; read it again to tell null.
      doc.rewind();
      bool null = false;
      return doc.is_null().get(null) == simdjson::SUCCESS && null ? Shape::kNull : Shape::kNotObject;
    }
    case JsonParser::Root::kInvalidJson: m.error = simdjson::error_message(e); return Shape::kInvalidJson;
  }
  JsonReader r;
  m.ReadFields(root, r, m.root, &m.continue_token, [&](std::string_view key, od::value v) {
    if (key == "items") m.IndexItems(v, r);
  });
  if (!r.failed()) r.Ok(m.parser.CheckEnd(doc));
  if (r.failed()) {
    m.Reset();
    m.error = simdjson::error_message(r.json_error());
    return Shape::kInvalidJson;
  }
  m.root.text = Trim(m.parser.body());
  m.root.readable_padding = m.parser.ReadableAfter(m.root.text);
  return Shape::kObject;
}

const std::string& DocumentIndex::error() const { return impl_->error; }
const DocumentIndex::Outline& DocumentIndex::root() const { return impl_->root; }
std::string_view DocumentIndex::continue_token() const { return impl_->continue_token; }
DocumentIndex::Items DocumentIndex::items_shape() const { return impl_->items_shape; }
const std::vector<DocumentIndex::Outline>& DocumentIndex::items() const { return impl_->items; }

}  // namespace ray_webhook
