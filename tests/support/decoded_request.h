// RequestOf: what a test reads from ReviewDecoder::Decode, the request or
// nullptr when decoding failed.
#pragma once

#include "ray_webhook/core/decode/review_decoder.h"

namespace ray_webhook {

using Decoded = Result<const AdmissionRequest*>;

inline const AdmissionRequest* RequestOf(const Decoded& d) { return d.ok() ? *d : nullptr; }

}  // namespace ray_webhook
