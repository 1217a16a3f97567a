#include "ray_webhook/tls/tls_policy.h"

namespace ray_webhook {
namespace {

// Only HTTP/1.1 is served: a client that offers h2 alone gets no ALPN
// answer and the handshake goes on (kube-apiserver offers http/1.1 only to
// webhooks since 1.16, kubernetes #75791).
int SelectHttp11(SSL*, const unsigned char** out, unsigned char* outlen, const unsigned char* in, unsigned int inlen,
                 void*) {
  static constexpr unsigned char kHttp11[] = {8, 'h', 't', 't', 'p', '/', '1', '.', '1'};
  unsigned char* selected = nullptr;
  if (SSL_select_next_proto(&selected, outlen, kHttp11, sizeof kHttp11, in, inlen) != OPENSSL_NPN_NEGOTIATED) {
    return SSL_TLSEXT_ERR_NOACK;
  }
  *out = selected;
  return SSL_TLSEXT_ERR_OK;
}

}  // namespace

Status ApplyTlsPolicy(SSL_CTX* ctx, const TlsConfig& config) {
  const int min_version = config.min_version == 13 ? TLS1_3_VERSION : TLS1_2_VERSION;
  if (SSL_CTX_set_min_proto_version(ctx, min_version) != 1) {
    return Status::Error("cannot set the minimum TLS version");
  }
  static constexpr char kTls12Ciphers[] =
      "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
      "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";
  if (SSL_CTX_set_cipher_list(ctx, kTls12Ciphers) != 1) {
    return Status::Error("cannot set the TLS 1.2 cipher list");
  }
  SSL_CTX_set_alpn_select_cb(ctx, &SelectHttp11, nullptr);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_COMPRESSION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (!config.client_ca_file.empty()) {
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(config.client_ca_file.c_str());
    if (!names || SSL_CTX_load_verify_locations(ctx, config.client_ca_file.c_str(), nullptr) != 1) {
      if (names) sk_X509_NAME_pop_free(names, X509_NAME_free);
      return Status::Error("cannot load the client CA " + config.client_ca_file);
    }
    SSL_CTX_set_client_CA_list(ctx, names);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
    // Without a session id context OpenSSL refuses to resume a TLS 1.2
    // session once peer verification is on (SSL_R_SESSION_ID_CONTEXT_UNINITIALIZED).
    static constexpr unsigned char kContext[] = "ray-webhook";
    SSL_CTX_set_session_id_context(ctx, kContext, sizeof kContext - 1);
  }
  return Status::Ok();
}

}  // namespace ray_webhook
