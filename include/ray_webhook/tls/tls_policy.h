// TlsPolicy: how the server's SSL_CTX negotiates.
//
// Contract: TLS 1.2 at least (1.3 when configured); for TLS 1.2 only ECDHE
// key exchange with AEAD ciphers (Mozilla's "intermediate" set), no
// renegotiation, no compression; with a client CA, a client certificate is
// required and verified (how an API server configured with an
// AdmissionConfiguration kubeconfig authenticates itself). An error when
// OpenSSL refuses a setting.
#pragma once

#include <openssl/ssl.h>

#include <string>

#include "ray_webhook/core/model/status.h"
#include "ray_webhook/tls/tls_config.h"

namespace ray_webhook {

Status ApplyTlsPolicy(SSL_CTX* ctx, const TlsConfig& config);

}  // namespace ray_webhook
