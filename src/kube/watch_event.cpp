#include "watch_event.h"

#include <optional>

namespace ray_webhook {
namespace {

namespace od = simdjson::ondemand;
using simdjson::SUCCESS;

std::optional<WatchEventType> TypeNamed(std::string_view name) {
  if (name == "ADDED") return WatchEventType::kAdded;
  if (name == "MODIFIED") return WatchEventType::kModified;
  if (name == "DELETED") return WatchEventType::kDeleted;
  if (name == "BOOKMARK") return WatchEventType::kBookmark;
  if (name == "ERROR") return WatchEventType::kError;
  return std::nullopt;
}

Status JsonError(std::string_view what, simdjson::error_code e) {
  return Status::Error(std::string(what) + ": " + simdjson::error_message(e));
}

// Reads metadata.resourceVersion, and a Status's code and message, from an
// event's object, whose text has been taken already.
simdjson::error_code ReadObjectFields(od::object& object, WatchEvent* event) {
  for (auto field_result : object) {
    od::field field;
    std::string_view key;
    if (auto e = std::move(field_result).get(field); e != SUCCESS) return e;
    if (auto e = field.unescaped_key().get(key); e != SUCCESS) return e;
    if (key == "metadata") {
      od::object meta;
      if (field.value().get_object().get(meta) != SUCCESS) continue;
      for (auto meta_field : meta) {
        od::field m;
        std::string_view name;
        if (auto e = std::move(meta_field).get(m); e != SUCCESS) return e;
        if (auto e = m.unescaped_key().get(name); e != SUCCESS) return e;
        if (name == "resourceVersion" && m.value().get_string().get(event->resource_version) != SUCCESS) {
          event->resource_version = {};
        }
      }
    } else if (key == "code") {
      if (field.value().get_int64().get(event->status_code) != SUCCESS) event->status_code = 0;
    } else if (key == "message") {
      if (field.value().get_string().get(event->status_message) != SUCCESS) event->status_message = {};
    }
  }
  return SUCCESS;
}

}  // namespace

simdjson::error_code WatchEventReader::CheckEnd(simdjson::ondemand::document& doc) const {
  // Once the walk is done, the document's raw JSON ends where the next token
  // starts, which is the end of the text when there is none (as JsonParser::CheckEnd).
  std::string_view whole;
  if (auto e = doc.raw_json().get(whole); e != SUCCESS) return e;
  return whole.data() + whole.size() == buffer_.data() + buffer_.size() ? SUCCESS : simdjson::TRAILING_CONTENT;
}

simdjson::padded_string_view WatchEventReader::Pad(std::string_view text) {
  if (buffer_.capacity() < text.size() + simdjson::SIMDJSON_PADDING) {
    buffer_.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  }
  buffer_.assign(text.data(), text.size());
  return simdjson::padded_string_view(buffer_.data(), buffer_.size(), buffer_.capacity());
}

Result<WatchEvent> WatchEventReader::ReadEvent(std::string_view line) {
  od::document doc;
  od::object root;
  if (auto e = parser_.iterate(Pad(line)).get(doc); e != SUCCESS) return JsonError("not JSON", e);
  if (auto e = doc.get_object().get(root); e != SUCCESS) return JsonError("not a JSON object", e);
  WatchEvent event;
  std::string_view type_name;
  bool has_type = false;
  bool has_object = false;
  for (auto field_result : root) {
    od::field field;
    std::string_view key;
    if (auto e = std::move(field_result).get(field); e != SUCCESS) return JsonError("not JSON", e);
    if (auto e = field.unescaped_key().get(key); e != SUCCESS) return JsonError("not JSON", e);
    if (key == "type") {
      if (auto e = field.value().get_string().get(type_name); e != SUCCESS)
        return JsonError("a type that is not a string", e);
      has_type = true;
    } else if (key == "object") {
      od::object object;
      if (auto e = field.value().get_object().get(object); e != SUCCESS)
        return JsonError("an object that is not one", e);
      // The text first (this walks the object to its end), then its fields from the start again.
      if (auto e = object.raw_json().get(event.object); e != SUCCESS) return JsonError("not JSON", e);
      if (auto e = object.reset().error(); e != SUCCESS) return JsonError("not JSON", e);
      if (auto e = ReadObjectFields(object, &event); e != SUCCESS) return JsonError("not JSON", e);
      has_object = true;
    }
  }
  if (auto e = CheckEnd(doc); e != SUCCESS) return JsonError("not JSON", e);
  if (!has_type) return Status::Error("an event without a type");
  if (!has_object) return Status::Error("an event without an object");
  const std::optional<WatchEventType> type = TypeNamed(type_name);
  if (!type) return Status::Error("an event of the unknown type \"" + std::string(type_name.substr(0, 40)) + "\"");
  event.type = *type;
  return event;
}

Result<ListPageMeta> WatchEventReader::ReadListPage(std::string_view body,
                                                    const std::function<void(std::string_view item)>& on_item) {
  od::document doc;
  od::object root;
  if (auto e = parser_.iterate(Pad(body)).get(doc); e != SUCCESS) return JsonError("the list is not JSON", e);
  if (auto e = doc.get_object().get(root); e != SUCCESS) return JsonError("the list is not a JSON object", e);
  ListPageMeta meta;
  bool has_items = false;
  for (auto field_result : root) {
    od::field field;
    std::string_view key;
    if (auto e = std::move(field_result).get(field); e != SUCCESS) return JsonError("the list is not JSON", e);
    if (auto e = field.unescaped_key().get(key); e != SUCCESS) return JsonError("the list is not JSON", e);
    if (key == "metadata") {
      od::object list_meta;
      if (field.value().get_object().get(list_meta) != SUCCESS) continue;
      for (auto meta_field : list_meta) {
        od::field m;
        std::string_view name, value;
        if (auto e = std::move(meta_field).get(m); e != SUCCESS) return JsonError("the list is not JSON", e);
        if (auto e = m.unescaped_key().get(name); e != SUCCESS) return JsonError("the list is not JSON", e);
        if (name != "resourceVersion" && name != "continue") continue;
        if (m.value().get_string().get(value) != SUCCESS) continue;
        (name == "continue" ? meta.continue_token : meta.resource_version) = std::string(value);
      }
    } else if (key == "items") {
      has_items = true;
      od::value items = field.value();
      bool null = false;
      if (items.is_null().get(null) == SUCCESS && null) continue;
      od::array array;
      if (auto e = items.get_array().get(array); e != SUCCESS) return JsonError("the list's items are no array", e);
      for (auto item_result : array) {
        od::object item;
        std::string_view text;
        if (auto e = std::move(item_result).get_object().get(item); e != SUCCESS)
          return JsonError("a list item is no object", e);
        if (auto e = item.raw_json().get(text); e != SUCCESS) return JsonError("a list item is not JSON", e);
        on_item(text);
        ++meta.items;
      }
    }
  }
  if (auto e = CheckEnd(doc); e != SUCCESS) return JsonError("the list is not JSON", e);
  if (!has_items) return Status::Error("the answer is not a list");
  return meta;
}

}  // namespace ray_webhook
