// WebhookServer: the HTTPS edge around ReviewHandler.
//
// Contract: serves POST /mutate and /validate (AdmissionReview in, answer
// out), GET /healthz, /readyz and /metrics, and answers everything else with
// a JSON error (404 unknown path, 405 wrong method, 413 body over the limit,
// 415 not JSON). A request never takes the server down: decode errors are
// 400s, and an unexpected exception in a handler is a 500 for that request
// alone. TCP_NODELAY is on and keep-alive connections serve many requests
// (cpp-httplib's defaults of no TCP_NODELAY and 5 requests per connection
// cost a keep-alive client about 44 ms per request: Nagle's algorithm against
// delayed ACK). The serving certificate is reloaded when its files change,
// and slow clients are cut off (ConnectionLoop).
#pragma once

#include <memory>
#include <string>

#include "ray_webhook/core/model/status.h"
#include "ray_webhook/server/server_config.h"

namespace ray_webhook {

class WebhookServer {
 public:
  explicit WebhookServer(const ServerConfig& config);
  ~WebhookServer();
  WebhookServer(const WebhookServer&) = delete;
  WebhookServer& operator=(const WebhookServer&) = delete;

  // Loads the TLS pair and binds the port, or says why it could not.
  Status Bind();
  // Serves until Shutdown() finishes; returns false if the listener failed.
  bool Serve();
  // Graceful shutdown, from another thread: /readyz turns 503 at once, the
  // listener keeps accepting for drain_delay, then stops; in-flight requests
  // finish and idle keep-alive connections are closed. Returns when Serve()
  // has returned, or false when shutdown_grace ran out first.
  bool Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ray_webhook
