// libFuzzer target over the edge's request framing (http/request_head.h):
// arbitrary bytes, fed in pieces as a network would deliver them. Besides
// crashes it checks that scanning in pieces finds what scanning at once
// finds, that a head is never longer than its limit, that a refusal carries
// an HTTP error status and a message, and that a head the parser accepts has
// views inside the head (the path a prefix of the target) which follow the
// head when its buffer moves.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "ray_webhook/http/request_head.h"

namespace {

void Require(bool ok) {
  if (!ok) std::abort();
}

bool Inside(std::string_view view, std::string_view whole) {
  if (view.empty()) return true;
  return view.data() >= whole.data() && view.data() + view.size() <= whole.data() + whole.size();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using ray_webhook::HeadScanner;
  if (size == 0) return 0;
  // The first byte sets the piece size: 1 to 256 bytes per read.
  const std::size_t piece = static_cast<std::size_t>(data[0]) + 1;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  ray_webhook::HeadLimits limits;
  limits.max_head_bytes = 4096;  // small limits, so the fuzzer reaches them
  limits.max_line_bytes = 512;
  limits.max_header_lines = 16;
  limits.max_body_bytes = 1 << 20;

  HeadScanner whole;
  const HeadScanner::State at_once = whole.Scan(bytes, limits);
  HeadScanner pieces;
  HeadScanner::State state = HeadScanner::State::kNeedMore;
  for (std::size_t n = std::min(piece, bytes.size()); state == HeadScanner::State::kNeedMore; n += piece) {
    state = pieces.Scan(bytes.substr(0, std::min(n, bytes.size())), limits);
    if (n >= bytes.size()) break;
  }
  Require(state == at_once);
  if (state == HeadScanner::State::kRefused) {
    Require(pieces.refusal().status == whole.refusal().status);
    return 0;
  }
  if (state != HeadScanner::State::kComplete) {
    Require(bytes.size() <= limits.max_head_bytes + 1);
    return 0;
  }
  Require(pieces.head_bytes() == whole.head_bytes());
  Require(whole.head_bytes() <= limits.max_head_bytes && whole.head_bytes() <= bytes.size());
  ray_webhook::RequestHead head;
  ray_webhook::Refusal refusal;
  if (!ray_webhook::ParseRequestHead(bytes.substr(0, whole.head_bytes()), limits, &head, &refusal)) {
    Require(refusal.status >= 400 && refusal.status < 600 && !refusal.message.empty());
    return 0;
  }
  Require(head.content_length <= limits.max_body_bytes);
  const std::string_view raw = bytes.substr(0, whole.head_bytes());
  Require(!head.method.empty() && !head.target.empty() && !head.path.empty());
  for (std::string_view view : {head.method, head.target, head.path, head.content_type}) Require(Inside(view, raw));
  Require(head.target.substr(0, head.path.size()) == head.path);

  // A copy of the head in another buffer: the placed views read the same bytes.
  const std::string moved(raw);
  ray_webhook::RequestHead placed = head;
  ray_webhook::PlaceAt(&placed, ray_webhook::PlacementOf(head, raw.data()), moved.data());
  Require(placed.method == head.method && placed.target == head.target && placed.path == head.path &&
          placed.content_type == head.content_type);
  Require(Inside(placed.target, moved));
  return 0;
}
