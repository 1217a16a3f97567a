// WebhookServer: the HTTPS edge around ReviewHandler.
//
// Contract: the webhook port (TLS) serves POST /mutate, /validate and /admit
// (AdmissionReview in, answer out) and GET or HEAD /healthz, /readyz and
// /metrics; the probe port, when configured, serves /healthz and /readyz in
// plain HTTP. Everything else is answered with a Kubernetes Status (404
// unknown path, 405 wrong method, 413 body over the limit, 415 not JSON).
// A request never takes the server down: a review that does not decode is a
// 400, and an unexpected exception in a handler is a 500 for that request
// alone. Connections keep alive for up to 100,000 requests, with
// TCP_NODELAY, and slow or idle ones are cut off (ConnectionLoop); the
// serving certificate is reloaded when its files change.
//
// Bind() starts serving; Serve() runs the housekeeping (certificate reloads,
// the connection metrics, the periodic audit) until Shutdown() ends it.
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

  // Loads the TLS pair, binds the ports and starts the event loops, which
  // accept and answer from then on; or says why it could not.
  Status Bind();
  // After a successful Bind(): blocks until Shutdown() is done with the
  // connections, then stops the loops, the audit and the housekeeping. A
  // listener cannot fail once bound, so there is no failure to return.
  void Serve();
  // Graceful shutdown, from another thread while Serve() runs: /readyz turns
  // 503 at once and every answer closes its connection; the listeners keep
  // accepting for drain_delay, then stop, and idle connections are closed.
  // In-flight requests get shutdown_grace to finish; the loops then close
  // whatever is left. Returns once Serve() is done: true when every
  // connection had finished, false when shutdown_grace ran out first.
  bool Shutdown();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ray_webhook
