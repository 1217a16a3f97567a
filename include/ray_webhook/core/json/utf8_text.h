// Utf8Text: text made valid UTF-8, for the few strings the core writes into
// JSON that did not come from a UTF-8-validated parse (the refusals of bodies
// it could not read, whose messages may quote what the peer sent).
//
// Contract: valid UTF-8 comes back unchanged; each byte that neither starts
// nor continues a valid sequence (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF) becomes U+FFFD, so JsonWriter::String then writes
// valid JSON.
#pragma once

#include <string>
#include <string_view>

namespace ray_webhook {

std::string Utf8Text(std::string_view text);

}  // namespace ray_webhook
