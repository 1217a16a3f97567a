// Text that goes back to users through the API server: denial messages and
// admission warnings.
//
// Contract: pure string functions; output is valid UTF-8 when input is, and
// never contains control characters.
#pragma once

#include <string>
#include <string_view>

namespace ray_webhook {

// kube-apiserver drops warnings with control characters or invalid UTF-8 and
// asks for at most 120 characters each (admission-webhooks reference, warnings).
inline constexpr std::size_t kMaxWarningRunes = 120;

// Strips control characters and cuts to kMaxWarningRunes code points, ending
// with "..." when cut.
std::string AdmissionWarning(std::string_view text);

// A user-supplied value in double quotes, with quotes, backslashes and control
// characters escaped and anything past max_bytes cut, so a message stays one
// readable line whatever the Pod contains.
std::string Quote(std::string_view value, std::size_t max_bytes = 256);

}  // namespace ray_webhook
