// The server's whole configuration: built once from flags and environment
// (see command_line.h) and passed down by const reference. The core reads only
// the policy fields; the edges read the rest.
#pragma once

#include <cstddef>
#include <string>

namespace ray_webhook {

struct Config {
  // Listener.
  std::string bind_address = "0.0.0.0";
  int port = 8443;
  std::string tls_cert_file;
  std::string tls_key_file;
  // Connections served at once; each keep-alive connection holds one thread
  // (cpp-httplib's model), so this bounds concurrent clients.
  int threads = 64;
  std::string log_level = "info";

  // Policy. KubeRay's operator reads CLUSTER_DOMAIN with this default (PR #951).
  std::string cluster_domain = "cluster.local";

  // Limits. 7 MiB is controller-runtime's webhook body limit; kube-apiserver
  // itself sends at most about 2 x 3 MiB.
  std::size_t max_body_bytes = 7 * 1024 * 1024;
  std::size_t max_json_depth = 200;
};

}  // namespace ray_webhook
