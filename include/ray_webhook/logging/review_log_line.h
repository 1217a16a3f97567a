// ReviewLogLine: the text of the line the server logs at info level for every
// review it answers, and of a user-supplied value in any of its log lines.
//
// A review line reads
//
//   review path=/mutate uid=U namespace=N pod=P cluster=C decision=allow rule=- patch_ops=3 warnings=0 head_lookup=no
//   us=12
//
// A value is written bare unless it is empty or holds a space, '"', '=', '\'
// or a control character; then it is quoted and escaped (Quote, cut at 128
// bytes), so lines stay greppable and a hostile uid cannot forge fields. Bare
// values are cut at 253 bytes (a DNS subdomain's length), at a UTF-8
// boundary. The line never holds env values or whole objects: they may hold
// secrets.
//
// Contract: pure functions; they append to *line and never clear it. Written
// by hand rather than through fmt because the line is built on every
// admission request (bench/journal/35-info-line-by-hand.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "ray_webhook/core/review/review_handler.h"

namespace ray_webhook {

struct ReviewLogFields {
  std::string_view path;  // "/mutate" or "/validate"
  std::string_view uid;
  std::string_view namespace_name;
  std::string_view pod;
  std::string_view cluster;
  bool allowed = true;
  std::string_view rule;  // the denying rule; written as "-" when allowed
  std::size_t patch_ops = 0;
  std::size_t warnings = 0;
  bool looked_up_heads = false;
  std::int64_t micros = 0;  // time spent deciding
};

// The fields of the line for an answered review (out.http_status 200) on
// endpoint; micros is the time spent deciding.
ReviewLogFields ReviewLogFieldsOf(const ReviewOutcome& out, Endpoint endpoint, std::int64_t micros);

// Appends value as a log line shows it: bare or quoted, as above.
void AppendLogValue(std::string_view value, std::string* line);

// Appends the review line, without a line end.
void AppendReviewLogLine(const ReviewLogFields& fields, std::string* line);

}  // namespace ray_webhook
