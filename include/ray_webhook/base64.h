// Standard base64 (RFC 4648, with padding): the encoding of
// AdmissionResponse.patch, whose Go type is []byte.
#pragma once

#include <string>
#include <string_view>

namespace ray_webhook {

std::string Base64Encode(std::string_view bytes);

}  // namespace ray_webhook
