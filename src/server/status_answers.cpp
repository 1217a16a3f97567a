#include "status_answers.h"

namespace ray_webhook {

HttpAnswer ProbeAnswer(std::string_view path, bool draining, const std::string& detail) {
  HttpAnswer answer;
  answer.content_type = "text/plain";
  if (path == "/readyz" && draining) {
    answer.status = 503;
    answer.body = "shutting down\n";
  } else {
    answer.body = "ok\n";
  }
  if (path == "/readyz" && !detail.empty()) answer.body += detail + "\n";
  return answer;
}

HttpAnswer MetricsAnswer(const Metrics& metrics) {
  HttpAnswer answer;
  answer.content_type = "text/plain; version=0.0.4; charset=utf-8";
  answer.body = metrics.Render();
  return answer;
}

}  // namespace ray_webhook
