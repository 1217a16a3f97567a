// HttpHandler: what answers the requests of one listener, once the
// connection has framed them whole.
//
// Contract: the connection calls CheckHead before it reads a request's body,
// and Handle once head and body are in memory, both on its event loop, which
// must never wait. Handle either answers at once or, for a request that must
// wait (the Kubernetes API lookup), returns the rest of its work as a
// Deferred: the connection runs it on a blocking worker and writes the answer
// it returns. Either way the handler only says what the answer is; the
// connection writes it (WriteAnswer) and decides whether it closes. Handle
// never throws: a failure is an answer (500).
#pragma once

#include <cstddef>
#include <memory>
#include <string_view>

#include "ray_webhook/http/answer_writer.h"
#include "ray_webhook/http/refusal.h"
#include "ray_webhook/http/request_head.h"
#include "ray_webhook/net/peer_addresses.h"

namespace ray_webhook {

struct HttpRequest {
  const RequestHead& head;
  std::string_view body;
  // How many bytes after the body may be read (never written): the parser may read the body in place.
  std::size_t readable_padding = 0;
  const PeerAddresses& peer;
};

// The part of an answer that may wait. Owns what it needs, apart from the
// request's bytes, which the connection keeps untouched until Run returns.
class Deferred {
 public:
  virtual ~Deferred() = default;
  virtual HttpAnswer Run() = 0;
};

struct Handled {
  HttpAnswer answer;                // when later is null
  std::unique_ptr<Deferred> later;  // set: run it on a blocking worker for the answer
};

class HttpHandler {
 public:
  virtual ~HttpHandler() = default;
  // Before any of the body is read: a refusal is answered at once from the
  // head alone, and the connection closes (its body is dropped unread).
  virtual Refusal CheckHead(const RequestHead& head) = 0;
  virtual Handled Handle(const HttpRequest& request) = 0;
  // True from the start of a shutdown: every answer closes its connection.
  virtual bool Stopping() const = 0;
};

}  // namespace ray_webhook
