#include "ray_webhook/core/decode/review_decoder.h"

#include <utility>

#include "ray_webhook/core/json/json_parser.h"
#include "review_envelope_decoder.h"

namespace ray_webhook {

struct ReviewDecoder::Impl {
  // Room for any ordinary Pod up front, so bodies of slightly different sizes
  // do not each grow the buffers again.
  JsonParser parser{kDefaultCapacity};
  // The last request decoded, and a Pod kept between reviews: each review
  // refills their lists in place, in memory the previous review left warm,
  // instead of allocating a dozen new ones.
  AdmissionRequest request;
  Pod spare_pod;
};

ReviewDecoder::ReviewDecoder() : impl_(std::make_unique<Impl>()) {}

std::size_t ReviewDecoder::capacity() const { return impl_->parser.capacity(); }

void ReviewDecoder::ShrinkToDefault() {
  if (capacity() <= kDefaultCapacity) return;
  // A new decoder's state also drops the lists a large Pod grew (thousands of env entries).
  ReviewDecoder fresh;
  std::swap(impl_, fresh.impl_);
}

ReviewDecoder::~ReviewDecoder() = default;

Result<const AdmissionRequest*> ReviewDecoder::Decode(std::string_view body, std::size_t readable_padding) {
  Status decoded = DecodeReviewEnvelope(impl_->parser, body, readable_padding, impl_->request, impl_->spare_pod);
  if (!decoded.ok()) return decoded;
  return &impl_->request;
}

}  // namespace ray_webhook
