// TlsPolicy: how the server's SSL_CTX negotiates.
//
// Contract: TLS 1.2 at least (1.3 when configured); for TLS 1.2 only ECDHE
// key exchange with AEAD ciphers (Mozilla's "intermediate" set), no
// renegotiation, no compression; with a client CA, a client certificate is
// required and verified (how an API server configured with an
// AdmissionConfiguration kubeconfig authenticates itself). Returns false with
// *error when OpenSSL refuses a setting.
#pragma once

#include <openssl/ssl.h>

#include <string>

#include "ray_webhook/config.h"

namespace ray_webhook {

bool ApplyTlsPolicy(SSL_CTX* ctx, const Config& config, std::string* error);

}  // namespace ray_webhook
