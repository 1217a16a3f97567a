// RequestHead: frames one HTTP/1.1 request in the bytes a connection has
// received so far, within fixed bounds, before anything else reads them.
//
// Contract: HeadScanner::Scan takes the connection's buffered bytes (always
// the same prefix, growing) and looks only at bytes it has not seen before,
// so a client trickling its head byte by byte costs linear time. It answers
// kNeedMore, kComplete (the head ends at head_bytes()) or kRefused with an
// HTTP status: 414 for a request line over 8 KiB, 431 for a header line over
// 8 KiB, a head over 64 KiB or more than 100 header lines. ParseRequestHead
// then reads a complete head and refuses what the server never takes:
// Transfer-Encoding (411: the body must come with a Content-Length), a
// body-carrying method without Content-Length (411), a Content-Encoding
// other than identity (415), an Expect other than 100-continue (417), a
// Content-Length over the body limit (413), and malformed framing (400).
// Headers it does not name (Accept-Encoding, Range) change nothing: answers
// are never compressed or partial. Pure: no I/O, and no allocation unless
// it refuses; the result's views point into the head.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "ray_webhook/http/refusal.h"

namespace ray_webhook {

struct HeadLimits {
  // nginx's large_client_header_buffers default is 4 x 8 KiB; a head of 64 KiB
  // or 100 lines is far beyond anything kube-apiserver sends.
  std::size_t max_line_bytes = 8 * 1024;
  std::size_t max_head_bytes = 64 * 1024;
  std::size_t max_header_lines = 100;
  // controller-runtime's webhook body limit.
  std::size_t max_body_bytes = 7 * 1024 * 1024;
};

class HeadScanner {
 public:
  enum class State { kNeedMore, kComplete, kRefused };

  State Scan(std::string_view buffered, const HeadLimits& limits);
  // Valid once Scan returned kComplete: the head's length, its blank line included.
  std::size_t head_bytes() const { return head_bytes_; }
  const Refusal& refusal() const { return refusal_; }
  // Bytes of the current head seen so far; 0 before its first byte.
  std::size_t scanned() const { return scanned_; }
  void Reset() { *this = HeadScanner(); }

 private:
  std::size_t scanned_ = 0;
  std::size_t line_start_ = 0;
  std::size_t lines_ = 0;
  std::size_t head_bytes_ = 0;
  Refusal refusal_;
};

struct RequestHead {
  std::string_view method;
  std::string_view target;  // as sent: path and query
  std::string_view path;    // target without its query
  std::string_view content_type;
  std::size_t content_length = 0;
  bool expect_continue = false;
  // Connection: close, or HTTP/1.0 without keep-alive.
  bool wants_close = false;
};

// Where a head's views lie in the buffer it was parsed from, as offsets: a
// buffer that grows (realloc) moves, and the views must follow it.
struct HeadPlacement {
  std::size_t method = 0, target = 0, path = 0, content_type = 0;
};
HeadPlacement PlacementOf(const RequestHead& head, const char* buffer);
// Points head's views at the same offsets of buffer.
void PlaceAt(RequestHead* head, const HeadPlacement& at, const char* buffer);

// head: exactly the bytes HeadScanner found, blank line included. Views in
// *out point into head. Returns false with *refusal set when refused.
bool ParseRequestHead(std::string_view head, const HeadLimits& limits, RequestHead* out, Refusal* refusal);

}  // namespace ray_webhook
