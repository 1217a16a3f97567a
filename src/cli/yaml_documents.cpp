#include "yaml_documents.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <array>
#include <charconv>
#include <cstdlib>
#include <map>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace ray_webhook {
namespace {

using Json = nlohmann::json;

std::string Where(const YAML::Mark& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

std::size_t CountValues(const Json& value) {
  std::size_t n = 0;
  std::vector<const Json*> stack{&value};
  while (!stack.empty()) {
    const Json* v = stack.back();
    stack.pop_back();
    ++n;
    if (v->is_structured()) {
      for (const Json& child : *v) stack.push_back(&child);
    }
  }
  return n;
}

bool OneOf(const std::string& s, std::initializer_list<const char*> words) {
  for (const char* w : words) {
    if (s == w) return true;
  }
  return false;
}

std::optional<Json> Integer(const std::string& text) {
  std::string digits;
  for (char c : text) {
    if (c != '_') digits += c;  // YAML 1.1 allows 1_000
  }
  bool negative = false;
  std::string_view s = digits;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.starts_with("0x")) {
    base = 16;
    s.remove_prefix(2);
  } else if (s.starts_with("0o")) {
    base = 8;
    s.remove_prefix(2);
  } else if (s.size() > 1 && s[0] == '0') {
    base = 8;  // YAML 1.1: 0755
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), magnitude, base);
  if (end != s.data() + s.size()) return std::nullopt;
  if (ec == std::errc::result_out_of_range) return Json(std::strtod(digits.c_str(), nullptr));
  if (ec != std::errc()) return std::nullopt;
  if (!negative) {
    if (magnitude <= static_cast<std::uint64_t>(INT64_MAX)) return Json(static_cast<std::int64_t>(magnitude));
    return Json(magnitude);
  }
  if (magnitude <= static_cast<std::uint64_t>(INT64_MAX) + 1) return Json(static_cast<std::int64_t>(0 - magnitude));
  return Json(-static_cast<double>(magnitude));
}

// A plain scalar, resolved as go-yaml v2 (sigs.k8s.io/yaml) resolves it.
Json ResolvePlain(const std::string& s) {
  if (OneOf(s, {"", "~", "null", "Null", "NULL"})) return nullptr;
  if (OneOf(s, {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON", "y", "Y"})) return true;
  if (OneOf(s, {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF", "n", "N"})) return false;
  // Numbers are short; std::regex is recursive in the input's length, so only a short text is matched.
  if (s.size() <= 64) {
    static const std::regex kInt(R"([-+]?(0|[1-9][0-9_]*|0[0-7_]+|0x[0-9a-fA-F_]+|0o[0-7_]+))");
    static const std::regex kFloat(R"([-+]?(\.[0-9]+|[0-9][0-9_]*(\.[0-9_]*)?)([eE][-+]?[0-9]+)?)");
    if (std::regex_match(s, kInt)) {
      if (auto n = Integer(s)) return *n;
    }
    if (std::regex_match(s, kFloat)) {
      std::string digits;
      for (char c : s) {
        if (c != '_') digits += c;
      }
      return std::strtod(digits.c_str(), nullptr);
    }
  }
  return s;
}

class JsonBuilder final : public YAML::EventHandler {
 public:
  // The document built, or the first error; reset by OnDocumentStart.
  std::optional<std::string> error;
  Json root;

  void OnDocumentStart(const YAML::Mark&) override {
    error.reset();
    root = nullptr;
    stack_.clear();
    anchors_.clear();
    alias_values_ = 0;
  }
  void OnDocumentEnd() override {
    if (!error && !stack_.empty()) error = "the document ends inside a collection";
  }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { Put(mark, nullptr, anchor); }

  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (error) return;
    auto it = anchors_.find(anchor);
    if (it == anchors_.end()) {
      Fail(mark, "an alias to an unknown anchor");
      return;
    }
    alias_values_ += it->second.second;
    if (alias_values_ > kMaxAliasNodes) {
      Fail(mark, "aliases expand to more than " + std::to_string(kMaxAliasNodes) + " values");
      return;
    }
    Put(mark, Json(it->second.first), 0);
  }

  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (error) return;
    Json v;
    if (tag == "?") {
      v = ResolvePlain(value);
    } else if (tag == "!" || tag == "tag:yaml.org,2002:str") {
      v = value;  // quoted or block scalar, or !!str
    } else if (tag == "tag:yaml.org,2002:int") {
      auto n = Integer(value);
      if (!n) {
        Fail(mark, "!!int " + value.substr(0, 40) + " is not an integer");
        return;
      }
      v = *n;
    } else {
      v = ResolvePlain(value);  // !!bool, !!null, !!float and tags Kubernetes ignores alike
    }
    Put(mark, std::move(v), anchor);
  }

  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Open(mark, Json::array(), anchor);
  }
  void OnSequenceEnd() override { Close(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    Open(mark, Json::object(), anchor);
  }
  void OnMapEnd() override { Close(); }

 private:
  struct Frame {
    Json value;
    YAML::anchor_t anchor = 0;
    std::optional<std::string> key;  // a mapping's key waiting for its value
    YAML::Mark mark;
  };

  void Fail(const YAML::Mark& mark, std::string what) {
    if (!error) error = Where(mark) + ": " + std::move(what);
  }

  void Open(const YAML::Mark& mark, Json value, YAML::anchor_t anchor) {
    if (error) return;
    if (!stack_.empty() && stack_.back().value.is_object() && !stack_.back().key) {
      Fail(mark, "a mapping key that is a mapping or a sequence");
      return;
    }
    if (stack_.size() >= kMaxYamlDepth) {
      Fail(mark, "nested deeper than " + std::to_string(kMaxYamlDepth) + " levels");
      return;
    }
    stack_.push_back({std::move(value), anchor, std::nullopt, mark});
  }

  void Close() {
    if (error || stack_.empty()) return;
    Frame frame = std::move(stack_.back());
    stack_.pop_back();
    Put(frame.mark, std::move(frame.value), frame.anchor);
  }

  void Put(const YAML::Mark& /*mark*/, Json value, YAML::anchor_t anchor) {
    if (error) return;
    if (anchor != 0) anchors_[anchor] = {value, CountValues(value)};
    if (stack_.empty()) {
      root = std::move(value);
      return;
    }
    Frame& top = stack_.back();
    if (top.value.is_array()) {
      top.value.push_back(std::move(value));
    } else if (!top.key) {
      // Keys are strings in JSON; sigs.k8s.io/yaml writes a scalar key as its text.
      top.key = value.is_string() ? value.get<std::string>() : value.is_null() ? "null" : value.dump();
    } else {
      top.value[*top.key] = std::move(value);
      top.key.reset();
    }
  }

  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, std::pair<Json, std::size_t>> anchors_;
  std::size_t alias_values_ = 0;
};

}  // namespace

Status ForEachYamlDocument(std::istream& in, const YamlDocumentSink& each) {
  std::size_t number = 0;
  try {
    YAML::Parser parser(in);
    JsonBuilder builder;
    for (;;) {
      const std::size_t next = number + 1;
      if (!parser.HandleNextDocument(builder)) break;
      number = next;
      if (builder.error) return Status::Error("document " + std::to_string(number) + ", " + *builder.error);
      Json document = std::move(builder.root);
      builder.root = nullptr;
      if (Status s = each(std::move(document), number); !s.ok()) return s;
    }
  } catch (const YAML::Exception& e) {
    return Status::Error("document " + std::to_string(number + 1) + ", " + Where(e.mark) + ": not YAML: " + e.msg);
  } catch (const std::bad_alloc&) {
    return Status::Error("document " + std::to_string(number + 1) + ": out of memory");
  }
  return Status::Ok();
}

}  // namespace ray_webhook
