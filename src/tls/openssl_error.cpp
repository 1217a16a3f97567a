#include "ray_webhook/tls/openssl_error.h"

#include <openssl/err.h>

namespace ray_webhook {

std::string OpenSslErrorText(std::string_view none) {
  const unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return std::string(none);
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

}  // namespace ray_webhook
