// HttpRouter: cpp-httplib as the HTTP parser and router, and nothing else.
//
// Contract: Process() parses one request that the connection loop has already
// received whole and bounded (head and body in memory), routes it to the
// handlers registered with cpp-httplib's usual API, and appends the whole
// answer to *out. It touches no socket, so none of cpp-httplib's reading paths
// (chunked bodies, reads to EOF, line readers that grow byte by byte) can
// reach past what the loop framed.
//
// This is the one place that depends on cpp-httplib's internals: the
// protected Server::process_request(Stream&, bool, bool&, setup) and the
// Stream interface, as of 0.11 (Debian 12). A static_assert in the .cpp stops
// the build on another release; for a newer one, check process_request's
// parameters and Stream's pure virtuals against the new httplib.h and adjust
// this file alone.
#pragma once

#include <httplib.h>

#include <string>
#include <string_view>

#include "connection_loop.h"

namespace ray_webhook {

class HttpRouter final : public httplib::Server {
 public:
  // close: the answer must close the connection. Sets *client_closed when the
  // request asked to close.
  void Process(std::string_view head, std::string_view body, const PeerAddresses& peer, bool close, std::string* out,
               bool* client_closed);
};

}  // namespace ray_webhook
