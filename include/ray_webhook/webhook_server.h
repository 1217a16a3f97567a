// WebhookServer: the HTTPS edge around ReviewHandler.
//
// Contract: serves POST /mutate and /validate (AdmissionReview in, answer
// out), GET /healthz and /readyz, and answers everything else with a JSON
// error (404 unknown path, 405 wrong method, 413 body too large). A request
// never takes the server down: decode errors are 400s, and an unexpected
// exception in a handler is a 500 for that request alone. TCP_NODELAY is on
// and keep-alive connections serve many requests (cpp-httplib's defaults of
// no TCP_NODELAY and 5 requests per connection cost a keep-alive client
// about 44 ms per request: Nagle's algorithm against delayed ACK).
#pragma once

#include <memory>
#include <string>

#include "ray_webhook/config.h"

namespace ray_webhook {

class WebhookServer {
 public:
  explicit WebhookServer(const Config& config);
  ~WebhookServer();
  WebhookServer(const WebhookServer&) = delete;
  WebhookServer& operator=(const WebhookServer&) = delete;

  // Loads the TLS pair and binds the port; false with *error on failure.
  bool Bind(std::string* error);
  // Serves until Stop(); returns false if the listener failed.
  bool Serve();
  // Safe from any thread.
  void Stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ray_webhook
