#include "port_handler.h"

#include <exception>
#include <string>

#include "ray_webhook/http/refusal.h"
#include "ray_webhook/server/route.h"
#include "status_answers.h"

namespace ray_webhook {

Refusal PortHandler::CheckHead(const RequestHead& head) {
  return RouteOf(head.method, DecodedPath(head.path), head.content_type, webhook_port_).refusal;
}

Handled PortHandler::Handle(const HttpRequest& request) {
  const std::string path = DecodedPath(request.head.path);
  Handled handled;
  try {
    Route route = RouteOf(request.head.method, path, request.head.content_type, webhook_port_);
    switch (route.kind) {
      case Route::kRefused: handled.answer = AnswerOf(route.refusal); break;
      case Route::kMutate: return reviews_.Review(request, Endpoint::kMutate);
      case Route::kValidate: return reviews_.Review(request, Endpoint::kValidate);
      case Route::kAdmit: return reviews_.Review(request, Endpoint::kAdmit);
      case Route::kProbe:
        handled.answer = ProbeAnswer(path, Stopping(), ready_detail_ ? ready_detail_() : std::string());
        break;
      case Route::kMetrics:
        // The connection figures as of now, not as of the last maintenance tick.
        counters_.Export();
        handled.answer = MetricsAnswer(metrics_);
        break;
    }
  } catch (const std::exception& e) {
    handled.later.reset();
    handled.answer = HandlerFailed(path, e.what());
  }
  return handled;
}

bool PortHandler::Stopping() const { return draining_.load(std::memory_order_relaxed); }

}  // namespace ray_webhook
