// Head addresses inside `ray start` command lines and RAY_ADDRESS values.
//
// Contract: pure text functions. An address is `--address=HOST:PORT` or
// `--address HOST:PORT` (optionally quoted) where `--address` starts a word
// and PORT is decimal. Nothing else in the text is touched, so a user's
// command survives byte for byte apart from the host.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ray_webhook {

// True for an RFC 1035 label (lowercase letters, digits and '-', starting with
// a letter, at most 63 characters) other than "localhost": a bare service name.
bool IsShortServiceName(std::string_view host);

// The hosts of every address in the text, in order.
std::vector<std::string_view> AddressHosts(std::string_view text);

// The text with every address whose host is exactly `service` changed to
// `fqdn` (port and separator kept); nullopt when no address matched.
std::optional<std::string> RewriteRayStartAddress(std::string_view text, std::string_view service,
                                                  std::string_view fqdn);

// For a RAY_ADDRESS value: "service:PORT" -> "fqdn:PORT"; nullopt otherwise.
std::optional<std::string> RewriteHostPort(std::string_view value, std::string_view service, std::string_view fqdn);

}  // namespace ray_webhook
