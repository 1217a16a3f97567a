// ParsedObject: the one parse of a ray.io object's JSON text that its spec
// checks and the TLS-domain warning share.
//
// Contract: parses RayObject::raw_json with simdjson's DOM on the first call
// of Root(), never again, and owns the parser, so every spec_json::Json read
// from Root() is valid while the ParsedObject lives. Root() is absent when the
// object has no text (built in code) or its text is not a JSON object; then
// Unreadable() tells the second case, which the decoder's own parse of the
// same bytes makes a bug, not a user's error.
#pragma once

#include <simdjson.h>

#include "ray_webhook/core/model/ray_cluster_spec.h"
#include "spec_json.h"

namespace ray_webhook {

class ParsedObject {
 public:
  explicit ParsedObject(const RayObject& object) : object_(object) {}
  ParsedObject(const ParsedObject&) = delete;
  ParsedObject& operator=(const ParsedObject&) = delete;

  spec_json::Json Root();
  bool Unreadable();

 private:
  void Parse();

  const RayObject& object_;
  simdjson::dom::parser parser_;
  spec_json::Json root_;
  bool parsed_ = false;
  bool unreadable_ = false;
};

}  // namespace ray_webhook
