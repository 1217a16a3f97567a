// DNS name checks as Kubernetes validates names.
#pragma once

#include <string_view>

namespace ray_webhook {

// RFC 1123 subdomain: lowercase alphanumerics, '-' and '.', each label
// starting and ending alphanumeric, at most 253 characters. Pod names and
// cluster domains are such names.
bool IsDnsSubdomain(std::string_view name);

}  // namespace ray_webhook
