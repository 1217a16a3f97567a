// ServingCertificate: the TLS pair the server presents, swapped without a
// restart when the files change.
//
// Contract: Install() makes every new handshake on the SSL_CTX use the pair
// current at that moment (OpenSSL's certificate callback), so a swap never
// touches a handshake in progress. Reload() reads both files; a pair that
// does not load (missing, half-written, not PEM, key not matching the
// certificate) is rejected and the current pair stays in service. A pair
// whose bytes have not changed is not reloaded. cert-manager rewrites a
// mounted Secret through a symlink swap, which this sees as new bytes.
// Thread-safe.
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <memory>
#include <string>

#include "ray_webhook/core/model/status.h"
#include "ray_webhook/mutex.h"

namespace ray_webhook {

class ServingCertificate {
 public:
  ServingCertificate(std::string cert_file, std::string key_file);
  ~ServingCertificate();
  ServingCertificate(const ServingCertificate&) = delete;
  ServingCertificate& operator=(const ServingCertificate&) = delete;

  // True when a new pair went into service, false when the files are
  // unchanged; an error saying why when the pair was rejected.
  Result<bool> Reload();

  // Requires a pair to have loaded.
  bool Install(SSL_CTX* ctx);

  // Subject and notAfter of the pair in service, for logs.
  std::string Describe() const;

  // The leaf's notAfter as Unix time; 0 when no pair is in service.
  std::int64_t NotAfterUnixSeconds() const;

 private:
  struct Pair;
  static int OnCertificate(SSL* ssl, void* arg);
  std::shared_ptr<const Pair> Current() const EXCLUDES(mutex_);

  const std::string cert_file_;
  const std::string key_file_;
  mutable Mutex mutex_;
  std::shared_ptr<const Pair> current_ GUARDED_BY(mutex_);
};

}  // namespace ray_webhook
