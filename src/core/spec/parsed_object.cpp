#include "parsed_object.h"

namespace ray_webhook {

void ParsedObject::Parse() {
  if (parsed_) return;
  parsed_ = true;
  if (object_.raw_json.empty()) return;
  simdjson::dom::element root;
  // raw_json is a view into the review's body, without simdjson's padding
  // behind it: the parser copies it into its own padded buffer.
  if (parser_.parse(object_.raw_json.data(), object_.raw_json.size(), /*realloc_if_needed=*/true).get(root) !=
          simdjson::SUCCESS ||
      !root.is_object()) {
    unreadable_ = true;
    return;
  }
  root_ = root;
}

spec_json::Json ParsedObject::Root() {
  Parse();
  return root_;
}

bool ParsedObject::Unreadable() {
  Parse();
  return unreadable_;
}

}  // namespace ray_webhook
