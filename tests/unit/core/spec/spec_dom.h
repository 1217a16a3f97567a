// SpecDom: a test's object, written as nlohmann::json, as the spec rules read
// it: its text parsed once with simdjson's DOM, as ParsedObject parses a
// reviewed object's raw JSON.
//
// Contract: Root() is the parsed object, valid while the SpecDom lives; a
// SpecDom made in a call's argument list lives to the end of that call.
#pragma once

#include <simdjson.h>

#include <nlohmann/json.hpp>
#include <string>

#include "core/spec/spec_json.h"

namespace ray_webhook::testing {

class SpecDom {
 public:
  explicit SpecDom(const nlohmann::json& object) : text_(object.dump()) {
    simdjson::dom::element root;
    if (parser_.parse(text_).get(root) == simdjson::SUCCESS) root_ = root;
  }
  SpecDom(const SpecDom&) = delete;
  SpecDom& operator=(const SpecDom&) = delete;

  spec_json::Json Root() const { return root_; }

 private:
  std::string text_;
  simdjson::dom::parser parser_;
  spec_json::Json root_;
};

}  // namespace ray_webhook::testing
