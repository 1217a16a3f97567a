// Route: which of the server's few resources a request asks for, or the
// refusal that answers it instead.
//
// Contract: the webhook port serves POST /mutate, /validate and /admit (JSON bodies
// only: 415 otherwise) and GET or HEAD /healthz, /readyz and /metrics; the
// probe port, /healthz and /readyz alone. A known path with another method
// is 405 naming the methods it takes; any other path is 404. Paths are
// compared after percent-decoding, as cpp-httplib routed them, so "/mut%61te"
// is /mutate. Pure.
#pragma once

#include <string>
#include <string_view>

#include "ray_webhook/http/refusal.h"

namespace ray_webhook {

struct Route {
  enum Kind { kRefused, kMutate, kValidate, kAdmit, kProbe, kMetrics };
  Kind kind = kRefused;
  Refusal refusal;  // when kRefused
};

// path: already decoded (DecodedPath).
Route RouteOf(std::string_view method, std::string_view path, std::string_view content_type, bool webhook_port);

// %XX sequences decoded; anything else as it is.
std::string DecodedPath(std::string_view path);

// "application/json" in any case, optionally with parameters such as a charset.
bool IsJsonContentType(std::string_view value);

// The first ?timeout= value of a request target, percent- and plus-decoded
// as a query is; empty when there is none.
std::string TimeoutParam(std::string_view target);

}  // namespace ray_webhook
