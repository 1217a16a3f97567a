// Decodes an AdmissionReview body into the core's AdmissionRequest.
//
// Contract: takes the raw HTTP body; returns either a request that this
// decoder owns and whose views point into its buffers, or a one-line error fit
// for an HTTP 400 answer. The decoder keeps the request's lists between
// reviews and refills them in place, so decoding allocates only when a review
// has more of something than any before it.
// It never throws, never recurses on input nesting (the JSON parser is
// iterative and bounded by max_depth) and never reads more of the Pod than the
// rules use. One decoder serves one thread; the next Decode() invalidates the
// previous request. The JSON library stays behind this interface.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "ray_webhook/admission_request.h"

namespace ray_webhook {

struct DecodeResult {
  // Owned by the decoder: valid until its next Decode().
  const AdmissionRequest* request = nullptr;
  std::string error;  // set when request is null
};

class ReviewDecoder {
 public:
  // Bodies nested deeper than max_depth are refused, not parsed.
  explicit ReviewDecoder(std::size_t max_depth = 200);
  ~ReviewDecoder();
  ReviewDecoder(const ReviewDecoder&) = delete;
  ReviewDecoder& operator=(const ReviewDecoder&) = delete;

  // readable_padding: how many bytes after the body may be read (not
  // written), e.g. a std::string's spare capacity. With enough of it the
  // parser reads the body in place instead of copying it first.
  DecodeResult Decode(std::string_view body, std::size_t readable_padding = 0);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ray_webhook
