#include "http_router.h"

#include <algorithm>
#include <cstring>

static_assert(CPPHTTPLIB_VERSION[0] == '0' && CPPHTTPLIB_VERSION[1] == '.' && CPPHTTPLIB_VERSION[2] == '1' &&
                  CPPHTTPLIB_VERSION[3] == '1' && CPPHTTPLIB_VERSION[4] == '.',
              "HttpRouter is written against cpp-httplib 0.11; see http_router.h before moving to another release");

namespace ray_webhook {
namespace {

// cpp-httplib's Stream over one request already in memory: read() hands out
// the forwarded head, then exactly the body, then 0; write() appends to the
// answer. socket() is INVALID_SOCKET: cpp-httplib 0.11 answers 500 to a
// request whose descriptor is at least FD_SETSIZE when built without poll.
class BufferedRequestStream final : public httplib::Stream {
 public:
  BufferedRequestStream(std::string_view head, std::string_view body, const PeerAddresses& addresses, std::string* out)
      : head_(head), body_(body), addresses_(addresses), out_(out) {}

  bool is_readable() const override { return !head_.empty() || !body_.empty(); }
  bool is_writable() const override { return true; }
  ssize_t read(char* ptr, size_t size) override {
    std::string_view& from = head_.empty() ? body_ : head_;
    const std::size_t n = std::min(size, from.size());
    std::memcpy(ptr, from.data(), n);
    from.remove_prefix(n);
    return static_cast<ssize_t>(n);
  }
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

}  // namespace

void HttpRouter::Process(std::string_view head, std::string_view body, const PeerAddresses& peer, bool close,
                         std::string* out, bool* client_closed) {
  BufferedRequestStream stream(head, body, peer, out);
  bool closed = false;
  process_request(stream, close, closed, {});
  *client_closed = closed;
}

}  // namespace ray_webhook
