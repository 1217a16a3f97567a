#include "serving_context.h"

#include "ray_webhook/tls/tls_policy.h"

namespace ray_webhook {

Result<SSL_CTX*> NewServingContext(const TlsConfig& config, ServingCertificate& certificate) {
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  if (ctx == nullptr) return Status::Error("cannot set up TLS");
  if (Status tls = ApplyTlsPolicy(ctx, config); !tls.ok()) {
    SSL_CTX_free(ctx);
    return tls;
  }
  if (!certificate.Install(ctx)) {
    SSL_CTX_free(ctx);
    return Status::Error("cannot set up TLS");
  }
  // Idle connections give their 2 x 16 KiB record buffers back; writes go
  // out as far as the socket takes them and resume from where they stopped.
  SSL_CTX_set_mode(ctx, SSL_MODE_RELEASE_BUFFERS | SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // One read() per TLS record instead of two (its 5-byte header, then the
  // rest). Safe because the loop reads until SSL_ERROR_WANT_READ before it
  // waits on the socket, so nothing is left in OpenSSL's buffer unseen.
  SSL_CTX_set_read_ahead(ctx, 1);
  return ctx;
}

}  // namespace ray_webhook
