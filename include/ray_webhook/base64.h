// Standard base64 (RFC 4648, with padding): the encoding of
// AdmissionResponse.patch, whose Go type is []byte.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ray_webhook {

std::string Base64Encode(std::string_view bytes);

// Decodes what Base64Encode writes; nullopt on any character outside the
// standard alphabet (padding aside). For tools and tests that read patches.
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace ray_webhook
