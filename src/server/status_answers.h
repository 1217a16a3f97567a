// The server's answers about itself: the probes (/healthz, /readyz) and the
// Prometheus exposition (/metrics).
//
// Contract: /healthz is 200 "ok" while the process serves; /readyz is too,
// until a shutdown starts draining, then 503 so that the Service stops
// sending new requests while the in-flight ones finish. /metrics renders
// Metrics in the text format, version 0.0.4. Both plain text; pure apart
// from reading the metrics. /readyz's body adds `detail` when there is one:
// with --kuberay-version auto, which release is in force and why, so that a
// fallback to the fixed release is seen there (it is no reason to be unready).
#pragma once

#include <string>
#include <string_view>

#include "ray_webhook/http/answer_writer.h"
#include "ray_webhook/server/metrics.h"

namespace ray_webhook {

// path: /healthz or /readyz (decoded).
HttpAnswer ProbeAnswer(std::string_view path, bool draining, const std::string& detail = {});

HttpAnswer MetricsAnswer(const Metrics& metrics);

}  // namespace ray_webhook
