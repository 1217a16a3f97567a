// libFuzzer target over the review entry point (HandleReview), every endpoint (/mutate, /validate, /admit).
//
// Beyond "no crash, no sanitizer report", it checks what must hold for any
// body: the answer is 200 with an AdmissionReview or 400 with a Status; a
// patch is a JSON array of add/replace/remove operations; and, for bodies
// that are valid JSON, the patch applies to the object and the patched object
// needs no further patch (idempotence). The head lookup is simulated from the
// input so the second-head rule is exercised too. The server's review log line
// built from any answer must read back as its eleven fields, in order, with no
// control character: a hostile value can neither forge a field nor break the line.
#include <algorithm>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ray_webhook/core/review/review_handler.h"
#include "ray_webhook/logging/review_log_line.h"
#include "support/base64_decode.h"

namespace {

using nlohmann::json;
using ray_webhook::Endpoint;

void Require(bool ok) {
  if (!ok) std::abort();
}

// Deepest bracket nesting outside strings.
std::size_t NestingDepth(std::string_view body) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < body.size(); ++i) {
    const char c = body[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

// Returns the decoded patch, or a null json when there is none.
json CheckAnswer(const ray_webhook::ReviewOutcome& out, Endpoint endpoint) {
  Require(out.http_status == 200 || out.http_status == 400);
  const json answer = json::parse(out.body);  // throws, and so fails, on invalid JSON
  if (out.http_status == 400) {
    Require(answer.at("kind") == "Status");
    return nullptr;
  }
  const json& resp = answer.at("response");
  Require(resp.at("allowed").is_boolean());
  Require(resp.contains("patch") == resp.contains("patchType"));
  if (!resp.contains("patch")) return nullptr;
  Require(endpoint != Endpoint::kValidate && resp.at("allowed") == true);
  const json patch = json::parse(ray_webhook::Base64Decode(resp.at("patch").get<std::string>()).value());
  Require(patch.is_array() && !patch.empty());
  for (const json& op : patch) {
    const std::string name = op.at("op").get<std::string>();
    Require(name == "add" || name == "replace" || name == "remove");
    Require(op.at("path").get<std::string>().starts_with("/"));
  }
  return patch;
}

// Reads one value of the log line at pos: a quoted string whose escapes are
// \\, \" and \xHH, or a bare run up to the next space that holds no quote,
// '=' or backslash. Leaves pos after it.
void ReadLogValue(std::string_view line, std::size_t& pos) {
  if (pos < line.size() && line[pos] == '"') {
    for (++pos; pos < line.size() && line[pos] != '"'; ++pos) {
      if (line[pos] != '\\') continue;
      Require(pos + 1 < line.size());
      const char e = line[++pos];
      if (e == 'x') {
        Require(pos + 2 < line.size() && std::isxdigit(static_cast<unsigned char>(line[pos + 1])) &&
                std::isxdigit(static_cast<unsigned char>(line[pos + 2])));
        pos += 2;
      } else {
        Require(e == '\\' || e == '"');
      }
    }
    Require(pos < line.size());  // the closing quote
    ++pos;
    return;
  }
  const std::size_t start = pos;
  while (pos < line.size() && line[pos] != ' ') {
    Require(line[pos] != '"' && line[pos] != '=' && line[pos] != '\\');
    ++pos;
  }
  Require(pos > start);
}

void CheckLogLine(const ray_webhook::ReviewOutcome& out, Endpoint endpoint) {
  std::string line;
  ray_webhook::AppendReviewLogLine(ray_webhook::ReviewLogFieldsOf(out, endpoint, 7), &line);
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto c = static_cast<unsigned char>(line[i]);
    Require(c >= 0x20 && c != 0x7F);
    if (c == 0xC2 && i + 1 < line.size()) {
      const auto next = static_cast<unsigned char>(line[i + 1]);
      Require(next < 0x80 || next > 0x9F);  // no C1 control
    }
  }
  constexpr std::string_view kKeys[] = {"path", "uid",       "namespace", "pod",         "cluster", "decision",
                                        "rule", "patch_ops", "warnings",  "head_lookup", "us"};
  Require(line.starts_with("review "));
  std::size_t pos = 7;
  for (std::size_t k = 0; k < std::size(kKeys); ++k) {
    if (k > 0) Require(pos < line.size() && line[pos++] == ' ');
    Require(line.substr(pos).starts_with(kKeys[k]) && line.substr(pos + kKeys[k].size()).starts_with("="));
    pos += kKeys[k].size() + 1;
    ReadLogValue(line, pos);
  }
  Require(pos == line.size());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ray_webhook::ReviewDecoder decoder;
  static const ray_webhook::PolicyConfig config;
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const bool live_head = size % 3 == 0;
  const bool api_down = size % 5 == 0;
  ray_webhook::HeadLookup lookup = [&](std::string_view, std::string_view cluster) {
    if (api_down) return ray_webhook::HeadPodList(ray_webhook::Status::Error("simulated"));
    std::vector<ray_webhook::HeadPod> pods;
    if (live_head) pods.push_back({std::string(cluster) + "-head-other", "Running", false});
    return ray_webhook::HeadPodList(std::move(pods));
  };

  for (Endpoint endpoint : {Endpoint::kMutate, Endpoint::kValidate, Endpoint::kAdmit}) {
    const auto out = ray_webhook::HandleReview(body, endpoint, config, decoder, lookup);
    const json patch = CheckAnswer(out, endpoint);
    if (out.http_status == 200) CheckLogLine(out, endpoint);
    if (patch.is_null()) continue;

    // Re-state the body without duplicate keys, so both JSON libraries see the same document.
    // nlohmann's dump() recurses per level; the webhook does not, and may answer deeper bodies.
    if (NestingDepth(body) > 512) continue;
    json review = json::parse(body, nullptr, false);
    if (review.is_discarded()) continue;
    const std::string canonical = review.dump();
    const auto again = ray_webhook::HandleReview(canonical, endpoint, config, decoder, lookup);
    const json canonical_patch = CheckAnswer(again, endpoint);
    if (canonical_patch.is_null()) continue;
    json& object = review.at("request").at("object");
    object = object.patch(canonical_patch);  // throws, and so fails, when the patch does not apply
    const std::string patched = review.dump();
    const auto third = ray_webhook::HandleReview(patched, endpoint, config, decoder, lookup);
    Require(third.http_status == 200);
    Require(CheckAnswer(third, endpoint).is_null());  // idempotent
  }
  return 0;
}
