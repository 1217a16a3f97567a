// TlsConfig: what the server's TLS is configured with.
//
// Contract: plain data, built once by the command line (ServerConfig::tls).
#pragma once

#include <chrono>
#include <string>

namespace ray_webhook {

struct TlsConfig {
  // Reloaded without a restart when the files change (ServingCertificate).
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;  // when set, clients must present a certificate it signed
  int min_version = 12;        // 12 or 13
  std::chrono::milliseconds reload_interval{2000};
};

}  // namespace ray_webhook
