// NewServingContext: the SSL_CTX of the webhook port's handshakes.
//
// Contract: negotiates as TlsPolicy sets, with the serving certificate
// installed (a reload swaps it for later handshakes), and is tuned for many
// mostly idle connections served by a non-blocking loop: idle connections
// give their record buffers back, a write may go out in parts, and a record
// is read in one read(). The caller owns the context (SSL_CTX_free); on an
// error nothing is left allocated.
#pragma once

#include <openssl/ssl.h>

#include "ray_webhook/core/model/status.h"
#include "ray_webhook/tls/serving_certificate.h"
#include "ray_webhook/tls/tls_config.h"

namespace ray_webhook {

Result<SSL_CTX*> NewServingContext(const TlsConfig& config, ServingCertificate& certificate);

}  // namespace ray_webhook
