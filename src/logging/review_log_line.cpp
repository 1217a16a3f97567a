#include "ray_webhook/logging/review_log_line.h"

#include <array>
#include <charconv>
#include <utility>

#include "ray_webhook/core/model/admission_text.h"

namespace ray_webhook {
namespace {

constexpr std::size_t kMaxBareBytes = 253;
constexpr std::size_t kMaxQuotedBytes = 128;

// Bytes that make a value quoted: those that would split or forge a field,
// and the control characters Quote escapes (C0 and DEL here; C1, encoded as
// C2 80..C2 9F, is checked at its lead byte, marked 2).
constexpr std::array<unsigned char, 256> kQuoteClass = [] {
  std::array<unsigned char, 256> t{};
  for (int c = 0; c < 0x20; ++c) t[c] = 1;
  for (unsigned char c : {' ', '"', '=', '\\', '\x7f'}) t[c] = 1;
  t[0xC2] = 2;
  return t;
}();

bool NeedsQuotes(std::string_view v) {
  if (v.empty()) return true;
  for (std::size_t i = 0; i < v.size(); ++i) {
    const unsigned char kind = kQuoteClass[static_cast<unsigned char>(v[i])];
    if (kind == 0) continue;
    if (kind == 1) return true;
    if (i + 1 < v.size() && static_cast<unsigned char>(v[i + 1]) >= 0x80 &&
        static_cast<unsigned char>(v[i + 1]) <= 0x9F) {
      return true;
    }
  }
  return false;
}

template <typename Int>
void AppendInt(Int value, std::string* line) {
  char buf[24];
  const auto end = std::to_chars(buf, buf + sizeof buf, value).ptr;
  line->append(buf, end);
}

}  // namespace

void AppendLogValue(std::string_view value, std::string* line) {
  if (NeedsQuotes(value)) {
    line->append(Quote(value, kMaxQuotedBytes));
    return;
  }
  if (value.size() > kMaxBareBytes) {
    std::size_t end = kMaxBareBytes;
    // Back off to the start of a UTF-8 sequence (continuation bytes are 10xxxxxx).
    while (end > 0 && (static_cast<unsigned char>(value[end]) & 0xC0) == 0x80) --end;
    value = value.substr(0, end);
  }
  line->append(value);
}

ReviewLogFields ReviewLogFieldsOf(const ReviewOutcome& out, Endpoint endpoint, std::int64_t micros) {
  const Decision& d = out.decision;
  return {.path = EndpointPath(endpoint),
          .uid = out.uid,
          .namespace_name = out.namespace_name,
          .pod = out.pod_name,
          .cluster = out.cluster,
          .allowed = d.allowed,
          .rule = d.denial.rule,
          .patch_ops = d.patch.size(),
          .warnings = d.warnings.size(),
          .looked_up_heads = out.looked_up_heads,
          .micros = micros};
}

void AppendReviewLogLine(const ReviewLogFields& f, std::string* line) {
  line->append("review path=").append(f.path);
  const std::pair<std::string_view, std::string_view> values[] = {
      {" uid=", f.uid}, {" namespace=", f.namespace_name}, {" pod=", f.pod}, {" cluster=", f.cluster}};
  for (const auto& [key, value] : values) {
    line->append(key);
    AppendLogValue(value, line);
  }
  line->append(f.allowed ? " decision=allow rule=-" : " decision=deny rule=");
  if (!f.allowed) line->append(f.rule);
  line->append(" patch_ops=");
  AppendInt(f.patch_ops, line);
  line->append(" warnings=");
  AppendInt(f.warnings, line);
  line->append(f.looked_up_heads ? " head_lookup=yes us=" : " head_lookup=no us=");
  AppendInt(f.micros, line);
}

}  // namespace ray_webhook
