// OpenSslErrorText: the reason OpenSSL recorded for the last failure on this
// thread, as one line, and the thread's error queue emptied; `none` when
// OpenSSL recorded nothing.
#pragma once

#include <string>
#include <string_view>

namespace ray_webhook {

std::string OpenSslErrorText(std::string_view none);

}  // namespace ray_webhook
