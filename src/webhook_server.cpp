#include "ray_webhook/webhook_server.h"

#include <httplib.h>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

#include <sys/socket.h>

#include <chrono>

#include "ray_webhook/admission_response.h"
#include "ray_webhook/admission_text.h"
#include "ray_webhook/kube_api_client.h"
#include "ray_webhook/review_handler.h"

namespace ray_webhook {
namespace {

constexpr char kJson[] = "application/json";

// Values in log lines are quoted only when they need it, so lines stay
// greppable and a hostile uid cannot forge fields.
std::string LogValue(std::string_view v) {
  if (v.empty()) return "\"\"";
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || c == '\\' || static_cast<unsigned char>(c) < 0x20) return Quote(v, 128);
  }
  return std::string(v.substr(0, 253));
}

void SetError(httplib::Response& res, int status, std::string_view reason, std::string_view message) {
  res.status = status;
  res.set_content(EncodeErrorStatus(status, reason, message), kJson);
}

// cpp-httplib 0.11 listens with a backlog of 5: a burst of connections from
// several API servers overflows it, and dropped SYNs are retried only after a
// second. Its listening socket is protected, so reach it through a subclass.
class HttpsServer : public httplib::SSLServer {
 public:
  using httplib::SSLServer::SSLServer;
  bool RaiseListenBacklog() {
    const socket_t sock = svr_sock_;
    return sock != INVALID_SOCKET && ::listen(sock, SOMAXCONN) == 0;
  }
};

}  // namespace

struct WebhookServer::Impl {
  explicit Impl(const Config& c)
      : config(c), server(config.tls_cert_file.c_str(), config.tls_key_file.c_str()) {
    if (config.kube_api.configured()) {
      kube = std::make_unique<KubeApiClient>(config.kube_api);
      lookup = [this](std::string_view ns, std::string_view cluster) {
        PodListResult r = kube->ListHeadPods(ns, cluster);
        if (!r.ok) spdlog::warn("head lookup failed namespace={} cluster={} error={}", LogValue(ns), LogValue(cluster), LogValue(r.error));
        return r;
      };
    }
  }

  void Review(const httplib::Request& req, httplib::Response& res, Endpoint endpoint) {
    // One decoder per pool thread: its buffers are reused across requests.
    thread_local ReviewDecoder decoder(config.max_json_depth);
    const auto start = std::chrono::steady_clock::now();
    ReviewOutcome out = HandleReview(req.body, endpoint, config, decoder, lookup);
    const auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count();
    res.status = out.http_status;
    res.set_content(std::move(out.body), kJson);
    const char* path = endpoint == Endpoint::kMutate ? "/mutate" : "/validate";
    if (out.http_status != 200) {
      spdlog::warn("review rejected path={} remote={} status={} error={}", path, req.remote_addr,
                   out.http_status, LogValue(out.error));
      return;
    }
    const Decision& d = out.decision;
    // Never env values or whole objects: they may hold secrets.
    spdlog::info(
        "review path={} uid={} namespace={} pod={} cluster={} decision={} rule={} patch_ops={} warnings={} "
        "head_lookup={} us={}",
        path, LogValue(out.uid), LogValue(out.namespace_name), LogValue(out.pod_name), LogValue(out.cluster),
        d.allowed ? "allow" : "deny", d.allowed ? "-" : d.denial.rule, d.patch.size(), d.warnings.size(),
        out.looked_up_heads ? "yes" : "no", micros);
  }

  void Routes() {
    server.Post("/mutate", [this](const httplib::Request& q, httplib::Response& r) { Review(q, r, Endpoint::kMutate); });
    server.Post("/validate",
                [this](const httplib::Request& q, httplib::Response& r) { Review(q, r, Endpoint::kValidate); });
    auto ok = [](const httplib::Request&, httplib::Response& r) { r.set_content("ok\n", "text/plain"); };
    server.Get("/healthz", ok);
    server.Get("/readyz", ok);

    // cpp-httplib answers a wrong method on a known path with 404; say 405 and what is allowed.
    server.set_pre_routing_handler([](const httplib::Request& q, httplib::Response& r) {
      const bool review = q.path == "/mutate" || q.path == "/validate";
      const bool probe = q.path == "/healthz" || q.path == "/readyz";
      if ((review && q.method != "POST") || (probe && q.method != "GET" && q.method != "HEAD")) {
        r.set_header("Allow", review ? "POST" : "GET, HEAD");
        SetError(r, 405, "MethodNotAllowed", "method " + q.method + " is not allowed on " + q.path);
        return httplib::Server::HandlerResponse::Handled;
      }
      return httplib::Server::HandlerResponse::Unhandled;
    });
    // Called for every status >= 400; fill in only answers that have no body yet.
    server.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& q, httplib::Response& r) {
      if (!r.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
      switch (r.status) {
        case 404: SetError(r, 404, "NotFound", "no such path: " + q.path.substr(0, 256)); break;
        case 413: SetError(r, 413, "RequestEntityTooLarge", "request body exceeds the limit"); break;
        default: SetError(r, r.status, "BadRequest", "the request could not be served");
      }
      return httplib::Server::HandlerResponse::Handled;
    }));
    server.set_exception_handler([](const httplib::Request& q, httplib::Response& r, std::exception_ptr ep) {
      std::string what = "unknown error";
      try {
        if (ep) std::rethrow_exception(ep);
      } catch (const std::exception& e) {
        what = e.what();
      } catch (...) {
      }
      spdlog::error("handler failed path={} error={}", q.path, LogValue(what));
      SetError(r, 500, "InternalError", "internal error while handling the request");
    });
  }

  Config config;
  HttpsServer server;
  std::unique_ptr<KubeApiClient> kube;
  HeadLookup lookup;  // empty when no API is configured
};

WebhookServer::WebhookServer(const Config& config) : impl_(std::make_unique<Impl>(config)) {}
WebhookServer::~WebhookServer() = default;

bool WebhookServer::Bind(std::string* error) {
  auto& s = impl_->server;
  const Config& c = impl_->config;
  if (!s.is_valid()) {
    *error = "cannot load the TLS certificate \"" + c.tls_cert_file + "\" and key \"" + c.tls_key_file +
             "\" (missing, unreadable, or not a matching PEM pair)";
    return false;
  }
  SSL_CTX_set_min_proto_version(s.ssl_context(), TLS1_2_VERSION);
  s.set_tcp_nodelay(true);
  // cpp-httplib's default socket options add SO_REUSEPORT, which lets a second
  // process bind the same port silently and take half the connections.
  s.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
  });
  s.set_keep_alive_max_count(100000);
  s.set_payload_max_length(c.max_body_bytes);
  const int threads = c.threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  impl_->Routes();
  if (c.head_uniqueness.lookup && c.second_head_mode != RuleMode::kOff && !c.kube_api.configured()) {
    spdlog::warn("second-head lookup inactive: no Kubernetes API configured (not in a cluster, no --kube-api-server)");
  } else if (c.kube_api.configured()) {
    spdlog::info("second-head lookup via {} timeout={}ms", c.kube_api.server, c.kube_api.timeout.count());
  }
  if (!s.bind_to_port(c.bind_address, c.port)) {
    *error = "cannot listen on " + c.bind_address + ":" + std::to_string(c.port);
    return false;
  }
  if (!s.RaiseListenBacklog()) spdlog::warn("could not raise the listen backlog; bursts of connections may wait");
  return true;
}

bool WebhookServer::Serve() { return impl_->server.listen_after_bind(); }

void WebhookServer::Stop() { impl_->server.stop(); }

}  // namespace ray_webhook
