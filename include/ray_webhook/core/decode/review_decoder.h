// Decodes an AdmissionReview body into the core's AdmissionRequest.
//
// Contract: takes the raw HTTP body; returns either a request that this
// decoder owns and whose views point into its buffers, or a one-line error fit
// for an HTTP 400 answer. The decoder keeps the request's lists between
// reviews and refills them in place, so decoding allocates only when a review
// has more of something than any before it.
// It never throws and never recurses on input nesting: it walks the body
// once, front to back (simdjson On Demand), builds no tree, and skips what the
// rules do not read with the parser's iterative scan, so no depth bound is
// needed. What it reads is checked in full; what it skips is checked only as
// far as the scan goes (UTF-8, strings, bracket balance), as for any On Demand
// reader. A repeated key counts with its last value, as in Go's encoding/json.
// One decoder serves one thread; the next Decode() invalidates the previous
// request. The JSON library stays behind this interface.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "ray_webhook/core/model/admission_request.h"
#include "ray_webhook/core/model/status.h"

namespace ray_webhook {

class ReviewDecoder {
 public:
  ReviewDecoder();
  ~ReviewDecoder();
  ReviewDecoder(const ReviewDecoder&) = delete;
  ReviewDecoder& operator=(const ReviewDecoder&) = delete;

  // readable_padding: how many bytes after the body may be read (not
  // written), e.g. a std::string's spare capacity. With enough of it the
  // parser reads the body in place instead of copying it first.
  // The request is owned by the decoder: valid until its next Decode().
  Result<const AdmissionRequest*> Decode(std::string_view body, std::size_t readable_padding = 0);

  // The largest body decoded without growing: kDefaultCapacity for a new
  // decoder. A larger body grows the buffers to fit it, by about six bytes of
  // address space per body byte, and they stay that size until shrunk.
  static constexpr std::size_t kDefaultCapacity = 64 * 1024;
  std::size_t capacity() const;

  // Makes a decoder that grew for a large body hold no more than a new one, so
  // that a burst of large reviews does not pin their memory for the life of
  // the process. Does nothing to a decoder that never grew. Invalidates the
  // last request.
  void ShrinkToDefault();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ray_webhook
