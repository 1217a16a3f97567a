// libFuzzer target over the edge's request framing (http_request_head.h):
// arbitrary bytes, fed in pieces as a network would deliver them. Besides
// crashes it checks that scanning in pieces finds what scanning at once
// finds, that a head is never longer than its limit, and that a head the
// parser accepts is forwarded well formed, without the headers the edge
// answers itself or drops.
#include <cctype>
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

std::string Lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
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
  Require(head.forwarded.size() >= 4 && head.forwarded.ends_with("\r\n\r\n"));
  Require(head.forwarded.find("\r\n\r\n") == head.forwarded.size() - 4);
  const std::string lowered = Lowered(head.forwarded);
  for (const char* dropped : {"\r\naccept-encoding:", "\r\nexpect:", "\r\ntransfer-encoding:", "\r\nrange:"}) {
    Require(lowered.find(dropped) == std::string::npos);
  }
  return 0;
}
