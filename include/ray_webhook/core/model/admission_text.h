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

// kube-apiserver keeps a warning whole up to this many runes even when a
// request's warnings pass their 4 KiB budget (truncateItemRunesLength in
// apiserver's endpoints/filters/warning.go). For a warning that must carry a
// field path, which alone can take 90 characters.
inline constexpr std::size_t kMaxFieldWarningRunes = 256;

// Strips control characters and cuts to max_runes code points, ending with
// "..." when cut.
std::string AdmissionWarning(std::string_view text, std::size_t max_runes = kMaxWarningRunes);

// A user-supplied value in double quotes, with quotes, backslashes and control
// characters escaped and anything past max_bytes cut, so a message stays one
// readable line whatever the Pod contains.
std::string Quote(std::string_view value, std::size_t max_bytes = 256);

}  // namespace ray_webhook
