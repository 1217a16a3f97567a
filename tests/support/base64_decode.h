// Base64Decode: reads what the core's Base64Encode writes, for tests and the
// fuzzer that check the patches in answers. Not part of the server.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ray_webhook {

// nullopt on any character outside the standard alphabet (padding aside).
std::optional<std::string> Base64Decode(std::string_view text);

}  // namespace ray_webhook
