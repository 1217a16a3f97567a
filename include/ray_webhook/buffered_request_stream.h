// BufferedRequestStream: cpp-httplib's Stream over one request that the
// connection loop has already received whole, and the answer it writes.
//
// Contract: read() hands out the forwarded head, then exactly the body, then
// returns 0; write() appends to the caller's string. It touches no socket,
// so none of cpp-httplib's reading paths (chunked bodies, reads to EOF, line
// readers that grow byte by byte) can reach past what the loop framed and
// bounded. socket() is INVALID_SOCKET: cpp-httplib 0.11 answers 500 to a
// request whose descriptor is at least FD_SETSIZE when built without poll.
#pragma once

#include <httplib.h>

#include <string>
#include <string_view>

namespace ray_webhook {

// A connection's two addresses, as cpp-httplib reports them (numeric host,
// port in host order); learnt once when the connection is accepted.
struct PeerAddresses {
  std::string remote_ip, local_ip;
  int remote_port = 0, local_port = 0;
};

class BufferedRequestStream final : public httplib::Stream {
 public:
  BufferedRequestStream(std::string_view head, std::string_view body, const PeerAddresses& addresses, std::string* out)
      : head_(head), body_(body), addresses_(addresses), out_(out) {}

  bool is_readable() const override { return !head_.empty() || !body_.empty(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override;
  ssize_t write(const char* ptr, size_t size) override {
    out_->append(ptr, size);
    return static_cast<ssize_t>(size);
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    ip = addresses_.remote_ip;
    port = addresses_.remote_port;
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    ip = addresses_.local_ip;
    port = addresses_.local_port;
  }
  socket_t socket() const override { return INVALID_SOCKET; }

 private:
  std::string_view head_, body_;
  const PeerAddresses& addresses_;
  std::string* out_;
};

}  // namespace ray_webhook
