// HttpSession: HTTP/1.1 on one connection, request after request, as the
// event loop's Session.
//
// Contract: frames each request within HeadLimits into a buffer that starts
// small and doubles up to what the request needs, all connections' buffers
// together within one ByteBudget (503 and close when it is spent). A head
// that RequestHead refuses is answered and closes the connection; so does
// one whose body HttpHandler::CheckHead refuses, before any of the body is
// read (its body is dropped, never parsed). 100 Continue is sent only for a
// head that passed CheckHead. A whole request goes to HttpHandler::Handle;
// its Deferred part, if any, runs through SessionHost::RunBlocking, with the
// request's bytes left untouched until Resume. Whether an answer closes the
// connection is settled when it is written, never after: the request asked
// to, the handler or the loop is stopping, or the connection has served
// max_requests. Every answer is written by WriteAnswer.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <memory>

#include "ray_webhook/http/http_handler.h"
#include "ray_webhook/net/session.h"

namespace ray_webhook {

// Request bytes held by all connections together.
struct ByteBudget {
  explicit ByteBudget(std::size_t limit_bytes) : limit(limit_bytes) {}
  const std::size_t limit;
  std::atomic<std::size_t> used{0};
};

struct HttpSessionOptions {
  HeadLimits limits;
  std::size_t max_requests = 100000;
  // Advertised in Keep-Alive; the loop closes connections idle longer.
  std::chrono::milliseconds idle_timeout{30000};
};

// Opens an HttpSession per connection of one listener.
class HttpSessions final : public SessionFactory {
 public:
  HttpSessions(HttpHandler& handler, ByteBudget& budget, HttpSessionOptions options)
      : handler_(handler), budget_(budget), options_(options) {}
  std::unique_ptr<Session> Open(SessionHost& host, const PeerAddresses& peer) override;

 private:
  HttpHandler& handler_;
  ByteBudget& budget_;
  const HttpSessionOptions options_;
};

}  // namespace ray_webhook
