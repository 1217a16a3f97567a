// PortHandler: what one listener's requests are routed to.
//
// Contract: on the webhook port, POST /mutate, /validate and /admit go to
// the review path, GET /healthz, /readyz and /metrics to the server's own
// answers; on the probe port, the probes alone (RouteOf says which, and
// refuses the rest from the head, before any body is read). An exception
// out of a handler is a 500 for that request alone. Stopping() is true once
// the server drains, so that every answer closes its connection.
#pragma once

#include <atomic>
#include <functional>
#include <string>

#include "connection_counters.h"
#include "ray_webhook/http/http_handler.h"
#include "ray_webhook/server/metrics.h"
#include "ray_webhook/server/review_path.h"

namespace ray_webhook {

class PortHandler final : public HttpHandler {
 public:
  // webhook_port: the reviews and /metrics are served too. The references
  // outlive the handler. ready_detail: more lines for /readyz (ProbeAnswer); may be empty.
  PortHandler(bool webhook_port, ReviewPath& reviews, Metrics& metrics, ConnectionCounters& counters,
              const std::atomic<bool>& draining, std::function<std::string()> ready_detail = {})
      : webhook_port_(webhook_port),
        reviews_(reviews),
        metrics_(metrics),
        counters_(counters),
        draining_(draining),
        ready_detail_(std::move(ready_detail)) {}

  Refusal CheckHead(const RequestHead& head) override;
  Handled Handle(const HttpRequest& request) override;
  bool Stopping() const override;

 private:
  const bool webhook_port_;
  ReviewPath& reviews_;
  Metrics& metrics_;
  ConnectionCounters& counters_;
  const std::atomic<bool>& draining_;
  const std::function<std::string()> ready_detail_;
};

}  // namespace ray_webhook
