// Standard base64 (RFC 4648, with padding): the encoding of
// AdmissionResponse.patch, whose Go type is []byte.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ray_webhook {

std::string Base64Encode(std::string_view bytes);

// Replaces text[from, end) with its base64 encoding, in place, so that an
// answer can write its patch and then encode it without a second buffer.
// text grows by a third; nothing before `from` changes.
void EncodeBase64Tail(std::string& text, std::size_t from);

}  // namespace ray_webhook
